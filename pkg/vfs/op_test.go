package vfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpKindString(t *testing.T) {
	seen := map[string]bool{}
	for k := OpCreate; k <= OpClose; k++ {
		s := k.String()
		require.NotContains(t, s, "OpKind(", "kind %d has no name", int(k))
		require.False(t, seen[s], "duplicate name %s", s)
		seen[s] = true
	}
	require.Equal(t, "OpKind(99)", OpKind(99).String())
	require.Equal(t, "Rename /a -> /b", Op{Kind: OpRename, Path: "/a", Path2: "/b"}.String())
}

func TestIsMutating(t *testing.T) {
	mutating := map[OpKind]bool{
		OpCreate: true, OpOpenReadWrite: true, OpWrite: true, OpSync: true,
		OpTruncate: true, OpRename: true, OpLink: true, OpRemove: true,
		OpRemoveAll: true, OpMkdirAll: true, OpSyncDir: true,
	}
	for k := OpCreate; k <= OpClose; k++ {
		require.Equal(t, mutating[k], IsMutating(Op{Kind: k}), k.String())
	}
}

func TestWithLog(t *testing.T) {
	m := NewMem()
	var got []string
	fsys := WithLog(m, func(op Op) { got = append(got, op.Kind.String()) })
	require.NoError(t, WriteFileAtomic(fsys, "/f", []byte("x")))
	_, err := ReadFile(fsys, "/f")
	require.NoError(t, err)
	require.Equal(t, []string{
		"Create", "Write", "Sync", "Close", "Rename", "SyncDir",
		"Open", "Stat", "Read", "Read", "Close",
	}, got)
}
