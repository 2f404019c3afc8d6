package ha

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func TestFenceRefusesWritesOnceInvalid(t *testing.T) {
	mem := vfs.NewMem()
	var ok atomic.Bool
	ok.Store(true)
	fsys := Fence(mem, ok.Load)
	require.NoError(t, fsys.MkdirAll("/d", 0o700))
	f, err := fsys.Create("/d/a")
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.NoError(t, err)

	ok.Store(false)
	_, err = f.Write([]byte("y"))
	require.ErrorIs(t, err, ErrFenced, "a file opened before the deadline is fenced too")
	require.ErrorIs(t, f.Sync(), ErrFenced)
	require.NoError(t, f.Close())
	for name, op := range map[string]func() error{
		"create": func() error { _, err := fsys.Create("/d/b"); return err },
		"rename": func() error { return fsys.Rename("/d/a", "/d/c") },
		"remove": func() error { return fsys.Remove("/d/a") },
		"mkdir":  func() error { return fsys.MkdirAll("/e", 0o700) },
		"sync":   func() error { return fsys.SyncDir("/d") },
	} {
		require.True(t, errors.Is(op(), ErrFenced), name)
	}
	data, err := vfs.ReadFile(fsys, "/d/a")
	require.NoError(t, err, "reads go on")
	require.Equal(t, "x", string(data))
}
