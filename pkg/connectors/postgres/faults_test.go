package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// TestExactlyOnceThroughTaskFailures: a datagen → postgres job fails
// twice in every phase of the sink's two-phase commit: while writing into
// the open transaction, at PREPARE TRANSACTION, before COMMIT PREPARED
// (a crash between prepare and commit: the restore commits what its
// checkpoint names), after the commits of a checkpoint, before the
// notification reaches the sink, and while a restore commits and rolls
// back. Rows counted by SQL: each once.
func TestExactlyOnceThroughTaskFailures(t *testing.T) {
	t.Parallel()
	start := time.Now()
	phases := []string{"postgres.write", "postgres.prepare", "postgres.commit", "postgres.committed",
		"task.notify-complete", "postgres.recover"}
	var rules []fault.Rule
	for _, p := range phases {
		rules = append(rules, fault.Rule{Point: p, Action: fault.Error, Nth: 3, Every: 4, Times: 2})
	}
	f := fault.New(nil, rules...)
	url := database(t)
	exec(t, url, "CREATE TABLE t (idx bigint)")
	const n = 20000
	j := runtimetest.Start(t, fmt.Sprintf(`
name: pg-faults
parallelism: 2
checkpointing: {interval: 50ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 20ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 8000}
  - {uid: out, type: postgres, from: [gen], url: %q, table: t, batchSize: 500}
`, n, url), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	finished(t, j)
	lost, dup := onceEach(t, url, "t", n)
	planned, fired := f.Planned()
	scorecard.Record(t, start, scorecard.Entry{Suite: "datagen → PostgreSQL exactly-once (prepared transactions), task failures in every sink phase",
		Faults:  fmt.Sprintf("%d phases x 2 failures (%d restarts)", len(phases), j.Info().Restarts),
		Planned: planned, Fired: fired, Cases: 1, Records: n, Lost: lost, Duplicated: dup})
	for _, p := range phases {
		assert.Equal(t, 2, f.Fired(p), p)
	}
	assert.Zero(t, lost+dup, "lost %d, duplicated %d", lost, dup)
	assert.GreaterOrEqual(t, j.Info().Restarts, len(phases))
	m := operator(t, j, "out").Metrics
	assert.Positive(t, m["transactionsRecommitted"], "restores commit the transactions their checkpoint names")
	assert.Equal(t, []int64{0}, query(t, url, "SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()"))
}

// TestPostgresRestartDuringJob: the server crashes (immediate stop: open
// transactions are lost, prepared ones survive in its WAL) twice while
// the job writes and comes back half a second later; the job fails over
// until it reaches the server again, its restores commit or roll back
// what was prepared, and every row is in the table once.
func TestPostgresRestartDuringJob(t *testing.T) {
	t.Parallel()
	start := time.Now()
	srv := pgtest.Start(t)
	url := srv.URL("")
	exec(t, url, "CREATE TABLE t (idx bigint)")
	const n = 15000
	j := runtimetest.Start(t, fmt.Sprintf(`
name: pg-restart
parallelism: 2
checkpointing: {interval: 100ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 100ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 5000}
  - {uid: out, type: postgres, from: [gen], url: %q, table: t, batchSize: 200}
`, n, url), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	for range 2 {
		runtimetest.WaitUntil(t, waitFor, "rows committed", func() bool { return operator(t, j, "out").Metrics["transactionsCommitted"] > 0 })
		time.Sleep(300 * time.Millisecond)
		assert.NoError(t, srv.Kill())
		time.Sleep(500 * time.Millisecond)
		assert.NoError(t, srv.Start())
	}
	finished(t, j)
	lost, dup := onceEach(t, url, "t", n)
	scorecard.Record(t, start, scorecard.Entry{Suite: "datagen → PostgreSQL exactly-once, server crash (immediate stop) and restart during the job",
		Faults: fmt.Sprintf("2 server crashes (%d restarts)", j.Info().Restarts), Planned: 2, Fired: 2, Cases: 1, Records: n, Lost: lost, Duplicated: dup})
	assert.Zero(t, lost+dup, "lost %d, duplicated %d", lost, dup)
	assert.Positive(t, j.Info().Restarts)
	assert.Equal(t, []int64{0}, query(t, url, "SELECT count(*) FROM pg_prepared_xacts"))
}

// TestStopAndRestoreWithOrphan: a job stops with a savepoint; a new job
// (another id, so another prefix) restores it at another parallelism,
// commits what the savepoint names, takes over the first job's prefix
// and rolls back a prepared transaction of that prefix the savepoint
// does not name (as an attempt that crashed after the savepoint would
// leave); every row is in the table once.
func TestStopAndRestoreWithOrphan(t *testing.T) {
	t.Parallel()
	url := database(t)
	exec(t, url, "CREATE TABLE t (idx bigint)")
	// 6,000 records at 2,000 a second: the stop comes after 1,000 rows
	// are committed and well before the input ends, also on a loaded
	// machine.
	const n = 6000
	spec := func(par int) string {
		return fmt.Sprintf(`
name: pg-restore
parallelism: %d
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 2000}
  - {uid: out, type: postgres, from: [gen], url: %q, table: t}
`, par, n, url)
	}
	first := runtimetest.Start(t, spec(2), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, waitFor, "rows committed", func() bool { return query(t, url, "SELECT count(*) FROM t")[0] > 1000 })
	path, id, err := first.Stop(t.TempDir(), false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, first, waitFor))
	orphan := fmt.Sprintf("flinkgo-%s-out-1-%d", first.ID(), id+1)
	exec(t, url, "BEGIN; INSERT INTO t VALUES (-1); PREPARE TRANSACTION '"+orphan+"'")
	// A restore into another table is refused: the savepoint's prepared
	// transactions write into t.
	g, err := engine.Compile(runtimetest.Registry(t, testTypes), "moved.yaml", []byte(strings.Replace(spec(3), "table: t}", "table: t2}", 1)), engine.Defaults{})
	require.NoError(t, err)
	r, err := engine.LoadRestore(vfs.Default, path)
	require.NoError(t, err)
	plan := engine.PlanRestore(g, r, engine.RestoreOptions{})
	require.Len(t, plan.Problems, 1)
	assert.Contains(t, plan.Problems[0], `the snapshot's prepared transactions write into table "t"`)
	second := runtimetest.Start(t, spec(3), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
	finished(t, second)
	lost, dup := onceEach(t, url, "t", n)
	assert.Zero(t, lost+dup, "lost %d, duplicated %d", lost, dup)
	assert.EqualValues(t, 1, operator(t, second, "out").Metrics["transactionsRolledBack"])
	assert.Equal(t, []int64{0}, query(t, url, "SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()"))
	owner := query(t, url, "SELECT count(*) FROM flinkgo_sink_owners WHERE prefix = $1 AND owner->>'job' = $2", "flinkgo-"+first.ID()+"-out", second.ID())
	assert.Equal(t, []int64{1}, owner, "the restore took the first job's prefix over")
}
