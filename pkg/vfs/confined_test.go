package vfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Under a root, no operation follows a symlink out of it; a link that
// stays inside works; paths outside every root are plain OS paths; a
// rename cannot carry a file across the boundary.
func TestConfinedStaysBeneathRoots(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "in"), 0o700))
	require.NoError(t, os.MkdirAll(outside, 0o700))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
	require.NoError(t, os.Symlink("in", filepath.Join(root, "inlink"))) // relative: an absolute link counts as leading out
	fsys := Confined([]string{root})

	escape := filepath.Join(root, "out", "sp")
	require.Error(t, fsys.MkdirAll(escape, 0o700))
	_, err := fsys.Create(filepath.Join(root, "out", "f"))
	require.Error(t, err)
	_, err = fsys.Stat(filepath.Join(root, "out"))
	require.Error(t, err, "the link leads out")
	_, err = fsys.ReadDir(filepath.Join(root, "out"))
	require.Error(t, err)
	require.Error(t, fsys.SyncDir(filepath.Join(root, "out")))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was written outside")

	writeFile(t, fsys, filepath.Join(root, "inlink", "f"), "ok", true)
	require.Equal(t, "ok", readString(t, Default, filepath.Join(root, "in", "f")))

	writeFile(t, fsys, filepath.Join(outside, "g"), "plain", true)
	require.Equal(t, "plain", readString(t, fsys, filepath.Join(outside, "g")))
	require.ErrorIs(t, fsys.Rename(filepath.Join(outside, "g"), filepath.Join(root, "in", "g")), errAcrossRoots)
	require.ErrorIs(t, fsys.Link(filepath.Join(root, "in", "f"), filepath.Join(outside, "f")), errAcrossRoots)

	// A root that does not exist yet is created by MkdirAll.
	fresh := Confined([]string{filepath.Join(base, "new")})
	require.NoError(t, fresh.MkdirAll(filepath.Join(base, "new", "a", "b"), 0o700))
	fi, err := fresh.Stat(filepath.Join(base, "new", "a", "b"))
	require.NoError(t, err)
	require.True(t, fi.IsDir())
}
