package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// pebbleSpec counts and sums per key (a count and a reduce with a ttl,
// the operators on pebble) over n records, failing times times.
func pebbleSpec(name, backend string, par, n, times int) string {
	every := 1000
	if times == 0 { // test-fail reads times: 0 as its default
		every = n + 1
	}
	return fmt.Sprintf(`
name: pebble
parallelism: %d
stateBackend: {type: %s}
checkpointing: {interval: 20ms, externalized: retain-on-cancellation}
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 20000}
  - {uid: fail, type: test-fail, from: [gen], name: %s, every: %d, times: %d, at: process}
  - {uid: key, type: keyBy, from: [fail], expr: "idx %% 11"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: %s, parallelism: 1}
  - {uid: sum, type: reduce, from: [key], init: '{"n": 0}', expr: '{"n": acc.n + 1}', ttl: 1h}
  - {uid: sums, type: test-collect, from: [sum], name: %s-sum, parallelism: 1}
`, par, backend, n, name, every, max(times, 1), name, name)
}

// reduceTotal is the greatest "n" the reduce emitted: each of the 11 keys
// gets n/11 records, so the greatest is a key's exact final count (a lost
// update makes it less, a repeated one more).
func reduceTotal(t *testing.T, vals []string) int {
	t.Helper()
	seen := map[int]bool{}
	for _, v := range vals {
		var acc struct{ N int }
		require.NoError(t, json.Unmarshal([]byte(v), &acc), v)
		seen[acc.N] = true
	}
	top := 0
	for n := range seen {
		top = max(top, n)
	}
	return top
}

func totalCount(t *testing.T, vals []string) int {
	total := 0
	for _, n := range runtimetest.MaxCounts(t, vals) {
		total += n
	}
	return total
}

// A job on pebble, over the in-memory file system, fails three times and
// restarts from its checkpoints with exact counts: the DB of each attempt
// is rebuilt from the checkpoint, never trusted.
func TestPebbleJobExactAfterTaskFailures(t *testing.T) {
	name := runtimetest.UniqueName(t)
	runtimetest.Reset(name)
	mem := vfs.NewMem()
	j := runtimetest.Start(t, pebbleSpec(name, "pebble", 2, 11000, 3), runtimetest.Options{Types: testTypes, FS: mem, CheckpointsDir: "/chk"})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	require.Equal(t, int64(3), runtimetest.Fired(name))
	require.Equal(t, 11000, totalCount(t, runtimetest.Values(name)))
	require.Equal(t, 1000, reduceTotal(t, runtimetest.Values(name+"-sum")), "each of the 11 keys reached 1000 in the reduce")
	// Every attempt's DB is removed when its subtasks end.
	requireNoPebbleFiles(t, mem)
}

// requireNoPebbleFiles checks that no DB directory is left on fsys.
// pebbleRoot is where the engine puts pebble DBs when Env names no
// directory (on the test's MemFS).
var pebbleRoot = filepath.Join(os.TempDir(), "flinkgo-pebble")

func requireNoPebbleFiles(t *testing.T, fsys vfs.FS) {
	t.Helper()
	jobs, err := fsys.ReadDir(pebbleRoot)
	require.NoError(t, err)
	require.Empty(t, jobs, "the job's pebble directory is removed with its last DB")
}

// A power loss while a pebble job runs: the machine's disk keeps only what
// was synced. The DB's files are lost or torn (no WAL, no syncs); the job
// restored from its last checkpoint on that disk ends with exact counts.
func TestPebbleJobSurvivesPowerLoss(t *testing.T) {
	for _, backend := range []string{api.BackendPebble, incrementalBackend} {
		t.Run(backend, func(t *testing.T) { pebblePowerLoss(t, backend) })
	}
}

// pebblePowerLoss is TestPebbleJobSurvivesPowerLoss on backend (with
// incremental checkpoints: the shared files the checkpoint lists were
// synced before its _metadata).
func pebblePowerLoss(t *testing.T, backend string) {
	name := runtimetest.UniqueName(t)
	runtimetest.Reset(name)
	mem := vfs.NewMem()
	spec := pebbleSpec(name, backend, 2, 11000, 0)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, FS: mem, CheckpointsDir: "/chk"})
	runtimetest.WaitUntil(t, 20*time.Second, "some records counted", func() bool { return len(runtimetest.Values(name)) > 2000 })
	cp := runtimetest.WaitCheckpoint(t, 20*time.Second, j)
	crashed := mem.CrashClone(vfs.PowerLoss)
	runtimetest.Cancel(t, 10*time.Second, j)

	// The DB directories of the lost process are on the disk, in whatever
	// state the power loss left them; the restored job has its own.
	j = runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, FS: crashed, CheckpointsDir: "/chk", Restore: cp.Path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	require.Equal(t, 11000, totalCount(t, runtimetest.Values(name)))
	require.Equal(t, 1000, reduceTotal(t, runtimetest.Values(name+"-sum")))
}

// A savepoint taken on the heap restores on pebble at another parallelism
// and the other way round, with exact counts: both backends write the
// same canonical state files (with incremental checkpoints too).
func TestPebbleSavepointMovesBetweenBackends(t *testing.T) {
	for _, tc := range []struct {
		from, to       string
		fromPar, toPar int
	}{
		{api.BackendHashMap, api.BackendPebble, 1, 3},
		{api.BackendPebble, api.BackendHashMap, 3, 2},
		// Savepoints of a job with incremental checkpoints are canonical.
		{incrementalBackend, api.BackendHashMap, 2, 3},
	} {
		t.Run(tc.from+"-to-"+tc.to, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			runtimetest.Reset(name)
			mem := vfs.NewMem()
			j := runtimetest.Start(t, pebbleSpec(name, tc.from, tc.fromPar, 11000, 0), runtimetest.Options{Types: testTypes, FS: mem, CheckpointsDir: "/chk"})
			runtimetest.WaitUntil(t, 20*time.Second, "some records counted", func() bool { return len(runtimetest.Values(name)) > 2000 })
			path, _, err := j.Stop("/sp", false)
			require.NoError(t, err, "last error: %s", j.Info().Error)
			runtimetest.Wait(t, j, 10*time.Second)
			j = runtimetest.Start(t, pebbleSpec(name, tc.to, tc.toPar, 11000, 0), runtimetest.Options{Types: testTypes, FS: mem, CheckpointsDir: "/chk", Restore: path})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			require.Equal(t, 11000, totalCount(t, runtimetest.Values(name)))
			require.Equal(t, 1000, reduceTotal(t, runtimetest.Values(name+"-sum")))
		})
	}
}

// On a pebble job every keyed operator whose state is not on pebble yet
// is refused at submit, naming it and the types that are.
func TestPebbleRefusesOtherKeyedOperators(t *testing.T) {
	_, err := engine.Compile(testRegistry, "job.yaml", []byte(`
name: win
stateBackend: {type: pebble}
operators:
  - {uid: gen, type: datagen, rate: 10}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 3"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: win, type: window, from: [key], window: {type: tumbling, size: 1s}, time: processing, aggregate: {n: count()}}
  - {uid: out, type: print, from: [cnt, win]}
`), engine.Defaults{})
	require.Error(t, err)
	require.Contains(t, err.Error(), `job.yaml:8:`)
	require.Contains(t, err.Error(), `operators[3].type: "win": operator type "window" keeps its keyed state in memory only: on the pebble state backend only count, reduce run yet`)
	require.NotContains(t, err.Error(), `"cnt"`)

	// The daemon's default applies when the job says nothing; the job's
	// own choice wins.
	spec := []byte(`
name: win
operators:
  - {uid: gen, type: datagen, rate: 10}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 3"}
  - {uid: win, type: window, from: [key], window: {type: tumbling, size: 1s}, time: processing, aggregate: {n: count()}}
  - {uid: out, type: print, from: [win]}
`)
	_, err = engine.Compile(testRegistry, "job.yaml", spec, engine.Defaults{StateBackend: api.BackendPebble})
	require.ErrorContains(t, err, `"window" keeps its keyed state in memory only`)
	g, err := engine.Compile(testRegistry, "job.yaml", spec, engine.Defaults{})
	require.NoError(t, err)
	require.Equal(t, api.BackendHashMap, g.StateBackend)
}
