package checkpoint

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// A state file swapped for another valid one of the same size (from
// another snapshot of the same job) is caught: metadata records each
// file's own checksum, not one that every intact file shares.
func TestVerifyCatchesSwappedStateFile(t *testing.T) {
	fsys := vfs.NewMem()
	encode := func(pos string) []byte {
		ops := state.NewOperatorState()
		ops.Set("pos", state.Union, [][]byte{[]byte(pos)})
		data, _ := state.Encode(ops, nil)
		return data
	}
	a, b := encode("offset-0001"), encode("offset-0002")
	require.Equal(t, len(a), len(b))
	require.NotEqual(t, fileChecksum(a), fileChecksum(b))
	dir := "/cp/job/chk-1"
	require.NoError(t, fsys.MkdirAll(dir, 0o755))
	require.NoError(t, WriteStateFile(fsys, dir, "src-0.state", a))
	m := &Metadata{JobID: "job", CheckpointID: 1, Kind: "checkpoint", MaxParallelism: 128,
		Operators: []OperatorState{{UID: "src", Type: "kafka", Parallelism: 1,
			Subtasks: []Handle{{Subtask: 0, File: "src-0.state", Size: int64(len(a)), Checksum: fileChecksum(a)}}}}}
	require.NoError(t, PublishMetadata(fsys, dir, m))
	require.NoError(t, Verify(fsys, dir, m))
	require.NoError(t, vfs.WriteFileAtomic(fsys, filepath.Join(dir, "src-0.state"), b))
	require.ErrorContains(t, Verify(fsys, dir, m), "checksum mismatch")
}
