package checkpoint

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// writeCheckpoints runs the storage side of the checkpoint protocol as the
// runtime does for checkpoints 1..n with retention 1: create chk-<id>,
// write one state file per task (tmp, fsync, rename), publish _metadata,
// then dispose of the previous checkpoint. It reports each checkpoint whose
// publication returned, in order, until the first error.
func writeCheckpoints(fsys vfs.FS, base string, n, tasks int, published func(id int64)) error {
	const job = "job"
	for id := int64(1); id <= int64(n); id++ {
		dir := CheckpointDir(base, job, id)
		if err := vfs.MkdirAllDurable(fsys, dir, 0o755); err != nil {
			return err
		}
		m := &Metadata{JobID: job, JobName: "sweep", CheckpointID: id, Kind: Periodic.String(), MaxParallelism: 128,
			Operators: []OperatorState{{UID: "op", Type: "count", Parallelism: tasks}}}
		for task := 0; task < tasks; task++ {
			ops := state.NewOperatorState()
			ops.Set("pos", state.Union, [][]byte{[]byte(fmt.Sprintf("checkpoint %d task %d", id, task))})
			data, _ := state.Encode(ops, nil)
			name := StateFileName("op", task)
			if err := WriteStateFile(fsys, dir, name, data); err != nil {
				return err
			}
			m.Operators[0].Subtasks = append(m.Operators[0].Subtasks, Handle{Subtask: task, File: name, Size: int64(len(data)), Checksum: fileChecksum(data)})
		}
		if err := PublishMetadata(fsys, dir, m); err != nil {
			return err
		}
		published(id)
		if id > 1 {
			if err := Dispose(fsys, CheckpointDir(base, job, id-1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestCheckpointCrashSweep crashes at every mutating I/O step of writing
// three checkpoints (and disposing of the old ones), as a process crash and
// as a power loss, and checks what recovery finds: always a complete
// checkpoint (never a torn one), never older than the newest one whose
// publication had returned, and none only before the first was published.
func TestCheckpointCrashSweep(t *testing.T) {
	const checkpoints, tasks = 3, 2
	setup := func() *vfs.MemFS {
		mem := vfs.NewMem()
		require.NoError(t, mem.MkdirAll("/cp", 0o755))
		require.NoError(t, mem.SyncDir("/"))
		return mem
	}
	counter := vfs.Count(setup())
	require.NoError(t, writeCheckpoints(counter.FS(), "/cp", checkpoints, tasks, func(int64) {}))
	total := counter.N()
	points := 0
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		for k := 1; k <= total; k++ {
			cp := vfs.CrashAt(setup(), k, model)
			var lastPublished int64
			err := writeCheckpoints(cp.FS(), "/cp", checkpoints, tasks, func(id int64) { lastPublished = id })
			require.Error(t, err, "crash point %d never fired", k)
			require.True(t, cp.Crashed())
			points++
			clone := cp.Clone()
			dir, m, _, err := LatestComplete(clone, "/cp", "job")
			require.NoError(t, err)
			where := fmt.Sprintf("model %d, crash at op %d (%v), last published %d", model, k, cp.LastOp(), lastPublished)
			if lastPublished == 0 {
				if dir != "" {
					// Only the first checkpoint's own publish can have
					// become durable just before its call returned.
					require.Equal(t, int64(1), m.CheckpointID, where)
				}
				continue
			}
			require.NotEmpty(t, dir, "no complete checkpoint after %s", where)
			require.GreaterOrEqual(t, m.CheckpointID, lastPublished, where)
			require.NoError(t, Verify(clone, dir, m), where)
			require.Equal(t, filepath.Base(dir), fmt.Sprintf("chk-%d", m.CheckpointID))
		}
	}
	t.Logf("checkpoint crash sweep: %d mutating I/O steps x 2 crash models = %d crash points, recovery always found a complete checkpoint", total, points)
}
