package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// objectsOn is the FS a daemon builds for s3:// paths, with the object
// store kept in files of mem (so a crash can be simulated).
func objectsOn(mem vfs.FS) vfs.FS {
	return vfs.Mux(vfs.NewMem(), vfs.NewObjectFS(vfs.FileStore(mem, "/s3"), vfs.ObjectOptions{}))
}

// requireNoTornSnapshot checks the promise of the commit without rename:
// every checkpoint directory that has a _metadata is complete.
func requireNoTornSnapshot(t *testing.T, fsys vfs.FS, base, where string) {
	t.Helper()
	list, err := List(fsys, base, "job")
	require.NoError(t, err, where)
	for _, l := range list {
		dir, m, err := Load(fsys, l.Dir)
		if errors.Is(err, ErrNotSnapshot) {
			continue
		}
		require.NoError(t, err, where)
		require.NoError(t, Verify(fsys, dir, m), "%s: %s has a _metadata but is not complete", where, l.Dir)
	}
}

// TestObjectCheckpointCrashSweep is TestCheckpointCrashSweep on object
// storage: the store's files on a MemFS are crashed at every mutating step
// of writing three checkpoints and disposing of the old ones. Recovery
// always finds a complete checkpoint no older than the last published,
// and no directory with a _metadata is ever torn.
func TestObjectCheckpointCrashSweep(t *testing.T) {
	const base, checkpoints, tasks = "s3://bucket/cp", 3, 2
	counter := vfs.Count(vfs.NewMem())
	require.NoError(t, writeCheckpoints(objectsOn(counter.FS()), base, checkpoints, tasks, func(int64) {}))
	total, points := counter.N(), 0
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		for k := 1; k <= total; k++ {
			cp := vfs.CrashAt(vfs.NewMem(), k, model)
			var lastPublished int64
			err := writeCheckpoints(objectsOn(cp.FS()), base, checkpoints, tasks, func(id int64) { lastPublished = id })
			require.Error(t, err, "crash point %d never fired", k)
			points++
			clone := objectsOn(cp.Clone())
			where := fmt.Sprintf("model %v, crash at op %d (%v), last published %d", model, k, cp.LastOp(), lastPublished)
			requireNoTornSnapshot(t, clone, base, where)
			dir, m, _, err := LatestComplete(clone, base, "job")
			require.NoError(t, err)
			if lastPublished == 0 {
				continue
			}
			require.NotEmpty(t, dir, "no complete checkpoint after %s", where)
			require.GreaterOrEqual(t, m.CheckpointID, lastPublished, where)
		}
	}
	t.Logf("object checkpoint crash sweep: %d steps x 2 crash models = %d crash points", total, points)
}

func snapshotFixture(t *testing.T, fsys vfs.FS, dir string) *Metadata {
	m := &Metadata{JobID: "job", JobName: "x", CheckpointID: 7, Kind: Savepoint.String(), MaxParallelism: 128,
		Operators: []OperatorState{{UID: "op", Type: "count", Parallelism: 2}}}
	for task := range 2 {
		ops := state.NewOperatorState()
		ops.Set("pos", state.Union, [][]byte{[]byte(fmt.Sprint("task ", task))})
		data, _ := state.Encode(ops, nil)
		name := StateFileName("op", task)
		require.NoError(t, WriteStateFile(fsys, dir, name, data))
		m.Operators[0].Subtasks = append(m.Operators[0].Subtasks, Handle{Subtask: task, File: name, Size: int64(len(data)), Checksum: fileChecksum(data)})
	}
	return m
}

// TestObjectSnapshotOnS3 runs the snapshot storage against a real S3
// server: write, complete, load, verify, list; a second writer of the same
// snapshot loses; a repeat of the same publication is recognised; dispose
// deletes everything, _metadata first.
func TestObjectSnapshotOnS3(t *testing.T) {
	srv := s3test.Start(t)
	fsys := vfs.Mux(vfs.Default, s3test.FS(t, srv, s3store.Options{}))
	base := vfs.ObjectURL(s3test.Bucket(t, srv), "checkpoints")
	dir := CheckpointDir(base, "job", 7)
	require.Equal(t, base+"/job/chk-7", dir)
	m := snapshotFixture(t, fsys, dir)
	_, _, err := Load(fsys, dir)
	require.ErrorIs(t, err, ErrNotSnapshot, "state objects alone are not a snapshot")
	require.NoError(t, PublishMetadata(fsys, dir, m))
	require.NoError(t, PublishMetadata(fsys, dir, m), "the same _metadata again: an earlier attempt's answer was lost")
	other := *m
	other.CheckpointID = 8
	require.ErrorIs(t, PublishMetadata(fsys, dir, &other), ErrMetadataTaken)

	got, lm, err := Load(fsys, dir+"/_metadata")
	require.NoError(t, err)
	require.Equal(t, dir, got)
	require.Equal(t, int64(7), lm.CheckpointID)
	require.NoError(t, Verify(fsys, dir, lm))
	require.NoError(t, VerifySizes(fsys, dir, lm))
	list, err := List(fsys, base, "job")
	require.NoError(t, err)
	require.Equal(t, []Listed{{ID: 7, Dir: dir}}, list)

	require.NoError(t, Dispose(fsys, dir))
	_, err = fsys.Stat(dir)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
