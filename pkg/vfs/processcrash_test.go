package vfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProcessCrashKeepsEverything(t *testing.T) {
	m := NewMem()
	require.NoError(t, m.MkdirAll("/d/sub", 0o755))
	writeFile(t, m, "/d/f", "never synced", false)
	require.NoError(t, m.Link("/d/f", "/d/sub/g"))
	writeFile(t, m, "/d/tmp", "renamed", false)
	require.NoError(t, m.Rename("/d/tmp", "/d/h"))

	c := m.CrashClone(ProcessCrash)
	require.Equal(t, m.Dump(), c.Dump())
	require.Equal(t, "never synced", readString(t, c, "/d/f"))
	require.Equal(t, "renamed", readString(t, c, "/d/h"))

	appendString(t, c, "/d/sub/g", "!")
	require.Equal(t, "never synced!", readString(t, c, "/d/f"), "links still share an inode")
	require.Equal(t, "never synced", readString(t, m, "/d/f"), "the clone is independent")
}

func TestCrashCloneDropsOpenFiles(t *testing.T) {
	m := NewMem()
	f, err := m.Create("/f")
	require.NoError(t, err)
	c := m.CrashClone(ProcessCrash)
	_, err = f.Write([]byte("after"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, "", readString(t, c, "/f"), "writes to the old handle do not reach the clone")
}
