package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrNoSpace(t *testing.T) {
	require.ErrorIs(t, ErrNoSpace, syscall.ENOSPC)
	require.ErrorIs(t, ErrNoSpace, ErrInjected)
	require.Contains(t, ErrNoSpace.Error(), "no space left on device (injected)")

	m := NewMem()
	fsys := WithFaults(m, OnNth(1, func(op Op) bool { return op.Kind == OpWrite }, ErrNoSpace))
	f, err := fsys.Create("/f")
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	var pe *os.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "/f", pe.Path)
	_, err = f.Write([]byte("y"))
	require.NoError(t, err, "fires once")
	require.NoError(t, f.Close())
	require.Equal(t, "y", readString(t, m, "/f"), "the failed write did not run")
}

func TestOnNth(t *testing.T) {
	isSync := func(op Op) bool { return op.Kind == OpSync }
	tests := []struct {
		name      string
		inj       *NthInjector
		ops       []Op
		wantFail  int // index into ops, -1 for none
		wantFired bool
	}{
		{"first matching", OnNth(1, isSync, ErrInjected),
			[]Op{{Kind: OpWrite}, {Kind: OpSync}, {Kind: OpSync}}, 1, true},
		{"second matching", OnNth(2, isSync, ErrInjected),
			[]Op{{Kind: OpSync}, {Kind: OpWrite}, {Kind: OpSync}, {Kind: OpSync}}, 2, true},
		{"nil predicate matches all", OnNth(3, nil, ErrInjected),
			[]Op{{Kind: OpStat}, {Kind: OpOpen}, {Kind: OpRead}, {Kind: OpClose}}, 2, true},
		{"never reached", OnNth(5, isSync, ErrInjected),
			[]Op{{Kind: OpSync}, {Kind: OpSync}}, -1, false},
		{"mutating only", OnNth(1, IsMutating, ErrInjected),
			[]Op{{Kind: OpStat}, {Kind: OpReadDir}, {Kind: OpMkdirAll}}, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, op := range tc.ops {
				err := tc.inj.MaybeError(op)
				if i == tc.wantFail {
					require.ErrorIs(t, err, ErrInjected, "op %d", i)
					require.Equal(t, op, tc.inj.Op())
				} else {
					require.NoError(t, err, "op %d", i)
				}
			}
			require.Equal(t, tc.wantFired, tc.inj.Fired())
		})
	}
}

func TestWithFaultsOpNotRun(t *testing.T) {
	fail := func(kind OpKind) Injector {
		return InjectorFunc(func(op Op) error {
			if op.Kind == kind {
				return ErrInjected
			}
			return nil
		})
	}
	tests := []struct {
		kind  OpKind
		run   func(fsys FS) error
		check func(t *testing.T, m *MemFS)
	}{
		{OpCreate, func(fsys FS) error { _, err := fsys.Create("/new"); return err },
			func(t *testing.T, m *MemFS) { requireMissing(t, m, "/new") }},
		{OpRename, func(fsys FS) error { return fsys.Rename("/f", "/g") },
			func(t *testing.T, m *MemFS) { requireMissing(t, m, "/g") }},
		{OpLink, func(fsys FS) error { return fsys.Link("/f", "/g") },
			func(t *testing.T, m *MemFS) { requireMissing(t, m, "/g") }},
		{OpRemove, func(fsys FS) error { return fsys.Remove("/f") },
			func(t *testing.T, m *MemFS) { require.Equal(t, "data", readString(t, m, "/f")) }},
		{OpRemoveAll, func(fsys FS) error { return fsys.RemoveAll("/f") },
			func(t *testing.T, m *MemFS) { require.Equal(t, "data", readString(t, m, "/f")) }},
		{OpMkdirAll, func(fsys FS) error { return fsys.MkdirAll("/x", 0o755) },
			func(t *testing.T, m *MemFS) { requireMissing(t, m, "/x") }},
		{OpSyncDir, func(fsys FS) error { return fsys.SyncDir("/") },
			func(t *testing.T, m *MemFS) { requireMissing(t, m.CrashClone(PowerLoss), "/f") }},
		{OpTruncate, func(fsys FS) error {
			f, err := fsys.OpenReadWrite("/f")
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(0)
		}, func(t *testing.T, m *MemFS) { require.Equal(t, "data", readString(t, m, "/f")) }},
		{OpStat, func(fsys FS) error { _, err := fsys.Stat("/f"); return err }, nil},
		{OpReadDir, func(fsys FS) error { _, err := fsys.ReadDir("/"); return err }, nil},
		{OpRead, func(fsys FS) error { _, err := ReadFile(fsys, "/f"); return err }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			m := NewMem()
			writeFile(t, m, "/f", "data", true)
			err := tc.run(WithFaults(m, fail(tc.kind)))
			require.ErrorIs(t, err, ErrInjected)
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

func TestWithFaultsCloseStillCloses(t *testing.T) {
	inj := OnNth(1, func(op Op) bool { return op.Kind == OpClose }, ErrInjected)
	fsys := WithFaults(Default, inj)
	f, err := fsys.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	require.ErrorIs(t, f.Close(), ErrInjected)
	require.ErrorIs(t, f.Close(), os.ErrClosed, "the OS file was closed by the failed Close")
}

func TestWithFaultsOnOS(t *testing.T) {
	dir := t.TempDir()
	inj := InjectorFunc(func(op Op) error {
		if op.Kind == OpRename {
			return ErrNoSpace
		}
		return nil
	})
	err := WriteFileAtomic(WithFaults(Default, inj), filepath.Join(dir, "f"), []byte("x"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	var le *os.LinkError
	require.True(t, errors.As(err, &le))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "temp file removed")
	_, err = os.Stat(filepath.Join(dir, "f"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}
