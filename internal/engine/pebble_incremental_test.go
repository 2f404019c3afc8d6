package engine_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

const incrementalBackend = "pebble, incremental: true"

// sharedWrites logs the files written into a shared directory (the
// rename that publishes each), by name.
type sharedWrites struct {
	mu      sync.Mutex
	names   map[string]int
	removed int // files the sweeps deleted
}

func logSharedWrites(fsys vfs.FS) (vfs.FS, *sharedWrites) {
	w := &sharedWrites{names: map[string]int{}}
	return vfs.WithLog(fsys, func(op vfs.Op) {
		// A file is published by a rename on a disk, by its creation
		// (one object) in object storage.
		switch {
		case op.Kind == vfs.OpRename && strings.Contains(op.Path2, "/"+checkpoint.SharedDirName+"/"):
			w.add(vfs.Base(op.Path2))
		case op.Kind == vfs.OpCreate && vfs.IsObject(op.Path) && strings.Contains(op.Path, "/"+checkpoint.SharedDirName+"/"):
			w.add(vfs.Base(op.Path))
		case op.Kind == vfs.OpRemove && strings.Contains(op.Path, "/"+checkpoint.SharedDirName+"/"):
			w.mu.Lock()
			w.removed++
			w.mu.Unlock()
		}
	}), w
}

func (w *sharedWrites) add(name string) {
	w.mu.Lock()
	w.names[name]++
	w.mu.Unlock()
}

func (w *sharedWrites) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.names {
		out[k] = v
	}
	return out
}

// A pebble job with incremental checkpoints fails three times and
// restarts each time from its last checkpoint's DB files with exact
// counts; no shared file is ever written twice.
func TestPebbleIncrementalExactAfterTaskFailures(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		mem := vfs.NewMem()
		fsys, writes := logSharedWrites(mem)
		incrementalFailures(t, fsys, "/chk", writes)
		requireNoPebbleFiles(t, mem)
	})
	// In object storage: the same through a FileStore (no rename: each
	// file is one object, written whole; a logging wrapper would hide the
	// object store, so the writes are not counted).
	t.Run("s3", func(t *testing.T) {
		objects := vfs.NewMem()
		require.NoError(t, objects.MkdirAll("/s3/bucket", 0o755))
		incrementalFailures(t, vfs.Mux(vfs.NewMem(), vfs.NewObjectFS(vfs.FileStore(objects, "/s3"), vfs.ObjectOptions{})), "s3://bucket/chk", nil)
	})
}

// incrementalFailures runs a job failing three times on fsys with its
// checkpoints in chk; writes (nil: not checked) logs fsys's shared files.
func incrementalFailures(t *testing.T, fsys vfs.FS, chk string, writes *sharedWrites) {
	name := runtimetest.UniqueName(t)
	runtimetest.Reset(name)
	j := runtimetest.Start(t, pebbleSpec(name, incrementalBackend, 2, 11000, 3), runtimetest.Options{Types: testTypes, FS: fsys, CheckpointsDir: chk})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	require.Equal(t, int64(3), runtimetest.Fired(name))
	require.Equal(t, 11000, totalCount(t, runtimetest.Values(name)))
	require.Equal(t, 1000, reduceTotal(t, runtimetest.Values(name+"-sum")), "each of the 11 keys reached 1000 in the reduce")
	if writes == nil {
		return
	}
	w := writes.snapshot()
	require.NotEmpty(t, w, "the checkpoints wrote shared files")
	for n, times := range w {
		require.Equal(t, 1, times, "%s written %d times", n, times)
	}
	writes.mu.Lock()
	defer writes.mu.Unlock()
	require.Positive(t, writes.removed, "retention's sweeps deleted the files compactions replaced")
}

// incrementalSpec counts and sums per key over n records in keys keys,
// on pebble with incremental checkpoints, all retained.
func incrementalSpec(name string, par, n, keys, rate int) string {
	return fmt.Sprintf(`
name: incremental
parallelism: %d
stateBackend: {type: pebble, incremental: true}
checkpointing: {interval: 50ms, externalized: retain-on-cancellation, retained: 100}
operators:
  - {uid: gen, type: datagen, count: %d, rate: %d}
  - {uid: key, type: keyBy, from: [gen], expr: "idx %% %d"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: %s, parallelism: 1}
  - {uid: sum, type: reduce, from: [key], init: '{"n": 0}', expr: '{"n": acc.n + 1}'}
  - {uid: sums, type: test-collect, from: [sum], name: %s-sum, parallelism: 1}
`, par, n, rate, keys, name, name)
}

// Each checkpoint writes only the DB files no earlier one held (named by
// itself) and lists the others under the names they were first written
// with; a restore from the last, after the job is canceled, counts on
// exactly: as it was taken (the DBs opened from the files), at another
// parallelism and on the heap (each old DB read into key groups).
func TestPebbleIncrementalWritesNewFilesOnly(t *testing.T) {
	name := runtimetest.UniqueName(t)
	runtimetest.Reset(name)
	mem := vfs.NewMem()
	fsys, writes := logSharedWrites(mem)
	spec := incrementalSpec(name, 1, 50000, 2500, 10000)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, FS: fsys, CheckpointsDir: "/chk"})
	runtimetest.WaitUntil(t, 20*time.Second, "five checkpoints", func() bool {
		c := j.LatestCheckpoint()
		return c != nil && c.ID >= 5
	})
	runtimetest.Cancel(t, 10*time.Second, j)
	last := j.LatestCheckpoint()
	require.NotNil(t, last)
	// The history tells what each checkpoint wrote beside what it
	// references (Flink's checkpointedSize and size).
	var smaller int
	for _, c := range j.Checkpoints().History {
		if c.Status != "COMPLETED" {
			continue
		}
		require.Positive(t, c.CheckpointedSize, "checkpoint %d", c.ID)
		require.LessOrEqual(t, c.CheckpointedSize, c.Size, "checkpoint %d", c.ID)
		if c.CheckpointedSize < c.Size {
			smaller++
		}
	}
	require.Positive(t, smaller, "a checkpoint wrote less than it references")

	list, err := checkpoint.List(mem, "/chk", j.ID())
	require.NoError(t, err)
	metas := map[int64]*checkpoint.Metadata{}
	for _, l := range list {
		dir, m, err := checkpoint.Load(mem, l.Dir)
		if err != nil {
			continue // aborted at the cancel
		}
		require.NoError(t, checkpoint.Verify(mem, dir, m))
		metas[l.ID] = m
	}
	// local file → shared name, per operator and checkpoint.
	files := func(m *checkpoint.Metadata) map[string]checkpoint.DBFile {
		out := map[string]checkpoint.DBFile{}
		for _, op := range m.Operators {
			for _, h := range op.Subtasks {
				if op.UID == "cnt" || op.UID == "sum" {
					require.NotNil(t, h.DB, "%s: incremental", op.UID)
					require.NotEmpty(t, h.DB.Private, "the DB's manifest")
				}
				if h.DB != nil {
					for _, f := range h.DB.Shared {
						out[op.UID+"/"+f.Local] = f
					}
				}
			}
		}
		return out
	}
	var pairs, reused int
	var listedBytes, newBytes int64
	for id, m := range metas {
		prev, ok := metas[id-1]
		if !ok {
			continue
		}
		pairs++
		was := files(prev)
		for local, f := range files(m) {
			listedBytes += f.Size
			if p, ok := was[local]; ok {
				require.Equal(t, p.Name, f.Name, "checkpoint %d lists %s under the name %d gave it", id, local, id-1)
				reused++
				continue
			}
			require.True(t, strings.HasPrefix(f.Name, "c"+strconv.FormatInt(id, 10)+"-"), "checkpoint %d: %s is new since %d: written by %d", id, f.Name, id-1, id)
			newBytes += f.Size
		}
	}
	require.Positive(t, pairs, "two consecutive checkpoints retained")
	require.Positive(t, reused, "a checkpoint lists files of the one before")
	for n, times := range writes.snapshot() {
		require.Equal(t, 1, times, "%s written %d times", n, times)
	}
	t.Logf("%d consecutive pairs: %d files listed again, new bytes %d of %d listed", pairs, reused, newBytes, listedBytes)

	// Restore from the last: the counts go on exactly, whatever the
	// parallelism and backend.
	r, err := engine.LoadRestore(mem, last.Path)
	require.NoError(t, err)
	fast := incrementalSpec(name, 1, 50000, 2500, 200000)
	for _, to := range []struct{ what, spec string }{
		{"as taken", fast},
		{"at parallelism 3", incrementalSpec(name, 3, 50000, 2500, 200000)},
		{"on the heap at parallelism 2", strings.Replace(incrementalSpec(name, 2, 50000, 2500, 200000), "{type: pebble, incremental: true}", "{type: hashmap}", 1)},
	} {
		runtimetest.Reset(name)
		runtimetest.Reset(name + "-sum")
		g, err := engine.Compile(runtimetest.Registry(t, testTypes), "job.yaml", []byte(to.spec), engine.Defaults{})
		require.NoError(t, err)
		plan := engine.PlanRestore(g, r, engine.RestoreOptions{})
		require.Empty(t, plan.Problems, to.what)
		if to.spec != fast {
			require.Contains(t, strings.Join(plan.Notes, "\n"), "each old DB is read whole", to.what)
		}
		j = runtimetest.Start(t, to.spec, runtimetest.Options{Types: testTypes, FS: mem, CheckpointsDir: "/chk", Restore: last.Path})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), "%s: %s", to.what, j.Info().Error)
		require.Equal(t, 20, reduceTotal(t, runtimetest.Values(name+"-sum")), "%s: each of the 2500 keys reached 20", to.what)
		got := runtimetest.MaxCounts(t, runtimetest.Values(name))
		require.Len(t, got, 2500, to.what)
		for k, n := range got {
			require.Equal(t, 20, n, "%s: key %s", to.what, k)
		}
	}
}

// A shared file whose upload fails (disk full) fails that checkpoint
// only: later checkpoints complete (one that still holds the file writes
// it under the name it was given), and the job ends with exact counts
// without a restart.
func TestPebbleIncrementalFailedUploadRetried(t *testing.T) {
	name := runtimetest.UniqueName(t)
	runtimetest.Reset(name)
	mem := vfs.NewMem()
	inj := vfs.OnNth(2, func(op vfs.Op) bool {
		return op.Kind == vfs.OpCreate && strings.Contains(op.Path, "/"+checkpoint.SharedDirName+"/")
	}, syscall.ENOSPC)
	fsys, writes := logSharedWrites(vfs.WithFaults(mem, inj))
	spec := strings.Replace(incrementalSpec(name, 1, 30000, 3000, 10000), "retained: 100}", "retained: 100, tolerableFailures: 5}", 1)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, FS: fsys, CheckpointsDir: "/chk"})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	require.True(t, inj.Fired())
	failed := vfs.Base(inj.Op().Path)
	require.Equal(t, 10, reduceTotal(t, runtimetest.Values(name+"-sum")), "each of the 3000 keys reached 10")
	var failedID int64
	hist := j.Checkpoints().History
	for _, c := range hist {
		if c.Status == "FAILED" {
			require.Zero(t, failedID, "one checkpoint failed")
			failedID = c.ID
		}
	}
	require.NotZero(t, failedID, "the checkpoint whose upload failed")
	require.True(t, slices.ContainsFunc(hist, func(c api.CheckpointInfo) bool { return c.Status == "COMPLETED" && c.ID > failedID }),
		"a later checkpoint completed")
	require.Zero(t, j.Info().Restarts, "no restart")
	// A later checkpoint that still held the file wrote it under its
	// name, once (pebble may have compacted it away first).
	real := strings.TrimSuffix(strings.TrimPrefix(failed, "."), ".tmp")
	for n, times := range writes.snapshot() {
		require.Equal(t, 1, times, "%s written %d times", n, times)
	}
	t.Logf("the upload of %s failed; written later: %v", real, writes.snapshot()[real] == 1)
}

// Incremental checkpoints are the job's choice over the daemon's, on
// pebble only: asked of a job whose backend is the daemon's hashmap, they
// are refused at the field; the daemon's default leaves hashmap jobs alone.
func TestIncrementalResolved(t *testing.T) {
	spec := func(block string) []byte {
		return []byte("name: j\n" + block + "operators:\n  - {uid: gen, type: datagen, count: 1}\n  - {uid: out, type: test-collect, from: [gen], name: x}\n")
	}
	for _, tc := range []struct {
		what, block string
		defaults    engine.Defaults
		want        bool
		err         string
	}{
		{"the daemon's default on pebble", "", engine.Defaults{StateBackend: api.BackendPebble, Incremental: true}, true, ""},
		{"the daemon's default on hashmap", "", engine.Defaults{StateBackend: api.BackendHashMap, Incremental: true}, false, ""},
		{"the job says no", "stateBackend: {incremental: false}\n", engine.Defaults{StateBackend: api.BackendPebble, Incremental: true}, false, ""},
		{"the job says yes", "stateBackend: {type: pebble, incremental: true}\n", engine.Defaults{}, true, ""},
		{"the job asks on the daemon's hashmap", "stateBackend: {incremental: true}\n", engine.Defaults{StateBackend: api.BackendHashMap},
			false, "stateBackend.incremental: incremental checkpoints are pebble's"},
	} {
		g, err := engine.Compile(runtimetest.Registry(t, testTypes), "job.yaml", spec(tc.block), tc.defaults)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.what)
			require.ErrorContains(t, err, "state.backend.type is hashmap", tc.what)
			continue
		}
		require.NoError(t, err, tc.what)
		require.Equal(t, tc.want, g.Incremental, tc.what)
	}
}
