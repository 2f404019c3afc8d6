package vfs

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"
)

// powerLossCases each prepare a MemFS, crash it with PowerLoss and check
// what survived. Every case starts with a durable directory /d.
var powerLossCases = []struct {
	name  string
	setup func(t *testing.T, m *MemFS)
	check func(t *testing.T, c *MemFS)
}{
	{"data after last sync is lost",
		func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/d/f", "synced", true)
			require.NoError(t, m.SyncDir("/d"))
			appendString(t, m, "/d/f", "+lost")
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "synced", readString(t, c, "/d/f")) }},
	{"never-synced file with a durable entry is empty",
		func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/d/f", "unsynced", false)
			require.NoError(t, m.SyncDir("/d"))
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "", readString(t, c, "/d/f")) }},
	{"synced file without dir sync is gone",
		func(t *testing.T, m *MemFS) { writeFile(t, m, "/d/f", "data", true) },
		func(t *testing.T, c *MemFS) { requireMissing(t, c, "/d/f") }},
	{"rename without dir sync is reverted",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/target", "old")
			writeFile(t, m, "/d/tmp", "new", true)
			require.NoError(t, m.Rename("/d/tmp", "/d/target"))
		},
		func(t *testing.T, c *MemFS) {
			require.Equal(t, "old", readString(t, c, "/d/target"))
			requireMissing(t, c, "/d/tmp")
		}},
	{"rename with dir sync is durable",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/target", "old")
			writeFile(t, m, "/d/tmp", "new", true)
			require.NoError(t, m.Rename("/d/tmp", "/d/target"))
			require.NoError(t, m.SyncDir("/d"))
		},
		func(t *testing.T, c *MemFS) {
			require.Equal(t, "new", readString(t, c, "/d/target"))
			requireMissing(t, c, "/d/tmp")
		}},
	{"rename across dirs with only the target dir synced keeps the old name",
		func(t *testing.T, m *MemFS) {
			durableDir(t, m, "/e")
			durableFile(t, m, "/d/f", "data")
			require.NoError(t, m.Rename("/d/f", "/e/f"))
			require.NoError(t, m.SyncDir("/e"))
		},
		func(t *testing.T, c *MemFS) {
			require.Equal(t, "data", readString(t, c, "/d/f"))
			require.Equal(t, "data", readString(t, c, "/e/f"))
		}},
	{"rename across dirs with both dirs synced",
		func(t *testing.T, m *MemFS) {
			durableDir(t, m, "/e")
			durableFile(t, m, "/d/f", "data")
			require.NoError(t, m.Rename("/d/f", "/e/f"))
			require.NoError(t, m.SyncDir("/e"))
			require.NoError(t, m.SyncDir("/d"))
		},
		func(t *testing.T, c *MemFS) {
			requireMissing(t, c, "/d/f")
			require.Equal(t, "data", readString(t, c, "/e/f"))
		}},
	{"truncate without sync is lost",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "abcdef")
			truncate(t, m, "/d/f", 2, false)
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "abcdef", readString(t, c, "/d/f")) }},
	{"truncate with sync is durable",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "abcdef")
			truncate(t, m, "/d/f", 2, true)
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "ab", readString(t, c, "/d/f")) }},
	{"create over a durable file without sync keeps the old data",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "old")
			writeFile(t, m, "/d/f", "new", false)
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "old", readString(t, c, "/d/f")) }},
	{"hard link without dir sync is gone",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "data")
			require.NoError(t, m.Link("/d/f", "/d/g"))
		},
		func(t *testing.T, c *MemFS) {
			require.Equal(t, "data", readString(t, c, "/d/f"))
			requireMissing(t, c, "/d/g")
		}},
	{"hard link with dir sync shares one inode",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "data")
			require.NoError(t, m.Link("/d/f", "/d/g"))
			require.NoError(t, m.SyncDir("/d"))
			appendString(t, m, "/d/g", "+lost")
		},
		func(t *testing.T, c *MemFS) {
			require.Equal(t, "data", readString(t, c, "/d/g"))
			appendString(t, c, "/d/g", "!")
			require.Equal(t, "data!", readString(t, c, "/d/f"), "still one inode after the crash")
		}},
	{"sync through one link makes the data durable under both",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "data")
			require.NoError(t, m.Link("/d/f", "/d/g"))
			require.NoError(t, m.SyncDir("/d"))
			require.NoError(t, m.Remove("/d/f"))
			appendString(t, m, "/d/g", "+synced")
			syncFile(t, m, "/d/g")
		},
		func(t *testing.T, c *MemFS) {
			require.Equal(t, "data+synced", readString(t, c, "/d/f"))
			require.Equal(t, "data+synced", readString(t, c, "/d/g"))
		}},
	{"remove without dir sync is reverted",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "data")
			require.NoError(t, m.Remove("/d/f"))
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "data", readString(t, c, "/d/f")) }},
	{"remove with dir sync is durable",
		func(t *testing.T, m *MemFS) {
			durableFile(t, m, "/d/f", "data")
			require.NoError(t, m.Remove("/d/f"))
			require.NoError(t, m.SyncDir("/d"))
		},
		func(t *testing.T, c *MemFS) { requireMissing(t, c, "/d/f") }},
	{"remove all without dir sync is reverted",
		func(t *testing.T, m *MemFS) {
			durableDir(t, m, "/d/sub")
			durableFile(t, m, "/d/sub/f", "data")
			require.NoError(t, m.RemoveAll("/d/sub"))
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "data", readString(t, c, "/d/sub/f")) }},
	{"mkdir all needs every parent synced",
		func(t *testing.T, m *MemFS) {
			require.NoError(t, m.MkdirAll("/a/b", 0o755))
			durableFile(t, m, "/a/b/f", "data")
			require.NoError(t, m.SyncDir("/a"))
		},
		func(t *testing.T, c *MemFS) { requireMissing(t, c, "/a") }},
	{"mkdir all with every parent synced",
		func(t *testing.T, m *MemFS) {
			require.NoError(t, m.MkdirAll("/a/b", 0o755))
			durableFile(t, m, "/a/b/f", "data")
			require.NoError(t, m.SyncDir("/a"))
			require.NoError(t, m.SyncDir("/"))
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "data", readString(t, c, "/a/b/f")) }},
	{"directory handle sync makes entries durable",
		func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/d/f", "data", true)
			syncFile(t, m, "/d")
		},
		func(t *testing.T, c *MemFS) { require.Equal(t, "data", readString(t, c, "/d/f")) }},
	{"directory reachable twice is kept once",
		func(t *testing.T, m *MemFS) {
			durableDir(t, m, "/d/sub")
			require.NoError(t, m.Rename("/d/sub", "/sub"))
			require.NoError(t, m.Rename("/d", "/sub/d"))
			require.NoError(t, m.SyncDir("/sub"))
		},
		func(t *testing.T, c *MemFS) {
			require.Equal(t, []string{"sub"}, names(t, c, "/d"))
			require.Empty(t, names(t, c, "/d/sub"))
		}},
}

func TestPowerLoss(t *testing.T) {
	for _, tc := range powerLossCases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMem()
			durableDir(t, m, "/d")
			tc.setup(t, m)
			before := m.Dump()
			c := m.CrashClone(PowerLoss)
			require.Equal(t, before, m.Dump(), "CrashClone must not change the original")
			tc.check(t, c)
		})
	}
}

func TestPowerLossOfProcessCrashClone(t *testing.T) {
	m := NewMem()
	durableDir(t, m, "/d")
	durableFile(t, m, "/d/f", "old")
	appendString(t, m, "/d/f", "+unsynced")
	writeFile(t, m, "/d/g", "unsynced entry", true)

	c := m.CrashClone(ProcessCrash).CrashClone(PowerLoss)
	require.Equal(t, m.CrashClone(PowerLoss).Dump(), c.Dump(), "a process crash makes nothing durable")
}

// durableDir makes dir and its entry in the parent durable (the root is
// always durable).
func durableDir(t *testing.T, m *MemFS, dir string) {
	t.Helper()
	require.NoError(t, m.MkdirAll(dir, 0o755))
	require.NoError(t, m.SyncDir(parentDir(dir)))
}

// durableFile writes name, Syncs it and SyncDirs its parent.
func durableFile(t *testing.T, m *MemFS, name, data string) {
	t.Helper()
	writeFile(t, m, name, data, true)
	require.NoError(t, m.SyncDir(parentDir(name)))
}

func parentDir(name string) string { return clean(name + "/..") }

func appendString(t *testing.T, fsys FS, name, data string) {
	t.Helper()
	f, err := fsys.OpenReadWrite(name)
	require.NoError(t, err)
	_, err = f.Seek(0, 2)
	require.NoError(t, err)
	_, err = f.Write([]byte(data))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func truncate(t *testing.T, fsys FS, name string, size int64, sync bool) {
	t.Helper()
	f, err := fsys.OpenReadWrite(name)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	if sync {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

func syncFile(t *testing.T, fsys FS, name string) {
	t.Helper()
	f, err := fsys.Open(name)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

func requireMissing(t *testing.T, fsys FS, name string) {
	t.Helper()
	_, err := fsys.Stat(name)
	require.ErrorIs(t, err, fs.ErrNotExist, "%s should not exist in:\n%v", name, fsys)
}
