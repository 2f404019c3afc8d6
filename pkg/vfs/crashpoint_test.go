package vfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCrashAt(t *testing.T) {
	m := NewMem()
	durableFile(t, m, "/f", "durable")
	cp := CrashAt(m, 2, PowerLoss)
	require.False(t, cp.Crashed())
	require.Nil(t, cp.Clone())
	require.Equal(t, Op{}, cp.LastOp())

	fsys := cp.FS()
	_, err := fsys.Stat("/f")
	require.NoError(t, err, "reads are not counted")
	f, err := fsys.OpenReadWrite("/f") // mutating op 1
	require.NoError(t, err)
	_, err = f.Write([]byte("X")) // op 2: crash
	require.ErrorIs(t, err, ErrCrashed)
	require.True(t, cp.Crashed())
	require.Equal(t, Op{Kind: OpWrite, Path: "/f"}, cp.LastOp())

	_, err = fsys.Stat("/f")
	require.ErrorIs(t, err, ErrCrashed, "every later op fails")
	_, err = f.Read(make([]byte, 1))
	require.ErrorIs(t, err, ErrCrashed)
	require.ErrorIs(t, f.Close(), ErrCrashed)

	require.Equal(t, "durable", readString(t, cp.Clone(), "/f"))
	require.Equal(t, "durable", readString(t, m, "/f"), "the crashing write did not run")
}

func TestCounter(t *testing.T) {
	c := Count(NewMem())
	fsys := c.FS()
	require.NoError(t, fsys.MkdirAll("/d", 0o755))
	_, err := fsys.ReadDir("/d")
	require.NoError(t, err)
	require.NoError(t, WriteFileAtomic(fsys, "/d/f", []byte("x")))
	require.Equal(t, 6, c.N())
	var kinds []OpKind
	for _, op := range c.Ops() {
		kinds = append(kinds, op.Kind)
	}
	require.Equal(t, []OpKind{OpMkdirAll, OpCreate, OpWrite, OpSync, OpRename, OpSyncDir}, kinds)
}
