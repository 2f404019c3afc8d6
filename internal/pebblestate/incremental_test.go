package pebblestate_test

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/pebblestate"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// copyDir copies the files of src into a new dst (a restore's download).
func copyDir(t *testing.T, fsys vfs.FS, src, dst string, names []string) {
	t.Helper()
	require.NoError(t, fsys.MkdirAll(dst, 0o777))
	for _, n := range names {
		in, err := fsys.Open(filepath.Join(src, n))
		require.NoError(t, err)
		out, err := fsys.Create(filepath.Join(dst, n))
		require.NoError(t, err)
		_, err = io.Copy(out, in)
		require.NoError(t, err)
		require.NoError(t, in.Close())
		require.NoError(t, out.Close())
	}
}

func sharedOf(names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		if pebblestate.Shared(n) {
			out[n] = true
		}
	}
	return out
}

// A DB opened from a pebble checkpoint's files, with the backend's store
// manifest, is the state that was checkpointed: values, key counts, an
// undeclared table carried to the next (canonical) snapshot; a second
// checkpoint after a few changes shares most files with the first.
func TestStoreCheckpointRestores(t *testing.T) {
	fsys := vfs.NewMem()
	rng := state.RangeForSubtask(maxPar, 2, 1)
	s, err := pebblestate.Open(fsys, "/db/a")
	require.NoError(t, err)
	kb := state.NewKeyedBackendOn(maxPar, rng, s)
	defer func() { require.NoError(t, kb.Close()) }()
	v, err := state.NewValue(kb, "v", state.Int64Codec{})
	require.NoError(t, err)
	w, err := state.NewValue(kb, "w", state.Int64Codec{})
	require.NoError(t, err)
	var keys [][]byte
	for i := 0; i < 1000; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		if owner(k, 2) == 1 {
			keys = append(keys, k)
		}
	}
	for i, k := range keys {
		v.SetKey(k)
		v.Put(int64(i))
		w.Put(int64(-i))
	}
	v.SetKey(keys[0])
	v.Delete()
	require.NoError(t, kb.WriteStoreManifest())
	first, err := s.Checkpoint(s.CheckpointDir(1))
	require.NoError(t, err)
	require.NotEmpty(t, sharedOf(first))

	// 1% of the keys change, then a second checkpoint.
	for i := 0; i < len(keys)/100+1; i++ {
		v.SetKey(keys[i+1])
		v.Put(1000)
	}
	require.NoError(t, kb.WriteStoreManifest())
	second, err := s.Checkpoint(s.CheckpointDir(2))
	require.NoError(t, err)
	var added int
	for n := range sharedOf(second) {
		if !sharedOf(first)[n] {
			added++
		}
	}
	// The changes are one new file, or two when a compaction merged it
	// with the first one meanwhile.
	require.GreaterOrEqual(t, added, 1)
	require.LessOrEqual(t, added, 2, "%v then %v", first, second)

	copyDir(t, fsys, s.CheckpointDir(2), "/db/b", second)
	s2, err := pebblestate.Open(fsys, "/db/b")
	require.NoError(t, err)
	kb2 := state.NewKeyedBackendOn(maxPar, rng, s2)
	defer func() { require.NoError(t, kb2.Close()) }()
	require.NoError(t, kb2.RestoreStore())
	require.True(t, kb2.Restored("v"))
	require.True(t, kb2.Restored("w"))
	require.Equal(t, kb.NumKeys(), kb2.NumKeys())
	v2, err := state.NewValue(kb2, "v", state.Int64Codec{})
	require.NoError(t, err)
	for i, k := range keys {
		v2.SetKey(k)
		got, ok := v2.Get()
		switch {
		case i == 0:
			require.False(t, ok)
		case i <= len(keys)/100+1:
			require.Equal(t, int64(1000), got)
		default:
			require.Equal(t, int64(i), got)
		}
	}
	// A new key after the restore is counted, and a table declared anew
	// gets an id of its own.
	v2.SetKey(keys[0])
	v2.Put(7)
	x, err := state.NewValue(kb2, "x", state.Int64Codec{})
	require.NoError(t, err)
	x.Put(8)
	require.Equal(t, kb.NumKeys()+2, kb2.NumKeys())
	// The canonical snapshot of the restored backend carries "w", never
	// declared since.
	data, sum := state.Encode(state.NewOperatorState(), kb2)
	require.Equal(t, kb2.NumKeys(), sum.Keys)
	snap, err := state.Decode(data)
	require.NoError(t, err)
	h := state.NewKeyedBackend(maxPar, rng)
	h.Restore([]*state.Snapshot{snap})
	hw, err := state.NewValue(h, "w", state.Int64Codec{})
	require.NoError(t, err)
	hw.SetKey(keys[5])
	got, ok := hw.Get()
	require.True(t, ok)
	require.Equal(t, int64(-5), got)

	// An incremental state file leaves the store's tables out.
	en, sum := state.EncodeChunksWithoutStore(state.NewOperatorState(), kb2)
	require.Equal(t, kb2.NumKeys(), sum.Keys)
	require.Less(t, en.Size, int64(100))
}

// A DB holding other key groups (another parallelism) is refused.
func TestStoreRestoreRefusesOtherKeyGroups(t *testing.T) {
	fsys := vfs.NewMem()
	s, err := pebblestate.Open(fsys, "/db/a")
	require.NoError(t, err)
	kb := state.NewKeyedBackendOn(maxPar, state.RangeForSubtask(maxPar, 2, 0), s)
	_, err = state.NewValue(kb, "v", state.Int64Codec{})
	require.NoError(t, err)
	require.NoError(t, kb.WriteStoreManifest())
	names, err := s.Checkpoint(s.CheckpointDir(1))
	require.NoError(t, err)
	copyDir(t, fsys, s.CheckpointDir(1), "/db/b", names)
	require.NoError(t, kb.Close())
	s2, err := pebblestate.Open(fsys, "/db/b")
	require.NoError(t, err)
	kb2 := state.NewKeyedBackendOn(maxPar, state.RangeForSubtask(maxPar, 3, 0), s2)
	defer func() { require.NoError(t, kb2.Close()) }()
	require.ErrorContains(t, kb2.RestoreStore(), "take a savepoint")
}
