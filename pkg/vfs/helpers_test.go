package vfs

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeFile creates name with data and closes it; with sync it also Syncs
// the file (but never the directory).
func writeFile(t *testing.T, fsys FS, name, data string, sync bool) {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = io.WriteString(f, data)
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

// readString returns name's content, failing the test on error.
func readString(t *testing.T, fsys FS, name string) string {
	t.Helper()
	data, err := ReadFile(fsys, name)
	require.NoError(t, err)
	return string(data)
}

// names lists dir's entry names.
func names(t *testing.T, fsys FS, dir string) []string {
	t.Helper()
	entries, err := fsys.ReadDir(dir)
	require.NoError(t, err)
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
