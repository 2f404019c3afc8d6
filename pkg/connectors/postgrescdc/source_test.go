package postgrescdc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func filesJob(url, interval, failName, out string) string {
	return fmt.Sprintf(`
name: cdc
checkpointing: {interval: %s}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: postgres-cdc, url: "%s", tables: [items], slot: cdc_test}
  - {uid: fail, type: test-fail, from: [in], name: %s, every: 1000, times: 2}
  - {uid: out, type: file, from: [fail], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, interval, url, failName, out)
}

// TestExactlyOnceIntoFiles: an initial snapshot, then inserts, updates and
// deletes (several per transaction) while the job runs, through two
// failures restored from checkpoints, a stop with a savepoint, changes
// while the job is stopped, and run -s: every change is in the finished
// files exactly once, and the slot is confirmed only up to checkpoints.
func TestExactlyOnceIntoFiles(t *testing.T) {
	t.Parallel()
	url := database(t)
	db := connect(t, url)
	w := setupItems(t, db, 50)
	out, dir := t.TempDir(), t.TempDir()
	failName := runtimetest.UniqueName(t)
	opts := runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir}

	j := runtimetest.Start(t, filesJob(url, "100ms", failName, out), opts)
	runtimetest.WaitUntil(t, waitFor, "snapshot read", func() bool { return gauge(j, "in", "snapshotRows") == 50 })
	runtimetest.WaitCheckpoint(t, waitFor, j) // the failures restore a checkpoint (see TestExactlyOnceIntoKafka)
	w.run(t, 200, 400)
	w.bigTxn(t, 3000)
	w.run(t, 200, 400)
	runtimetest.WaitUntil(t, waitFor, "two failures", func() bool { return runtimetest.Fired(failName) == 2 })
	runtimetest.WaitUntil(t, waitFor, "all changes in finished files", func() bool {
		return len(runtimetest.FinishedLines(t, out)) >= len(w.expected)
	})
	path, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))

	// The slot's confirmed position is the savepoint's: the server keeps
	// the changes made while the job is stopped.
	w.run(t, 100, 1000)
	opts.Restore = path
	j = runtimetest.Start(t, filesJob(url, "100ms", failName, out), opts)
	w.run(t, 100, 1000)
	runtimetest.WaitUntil(t, waitFor, "all changes in finished files", func() bool {
		return len(runtimetest.FinishedLines(t, out)) >= len(w.expected)
	})
	_, _, err = j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))

	lines := runtimetest.FinishedLines(t, out)
	got := make([]string, len(lines))
	for i, l := range lines {
		got[i] = changeID(t, l)
	}
	requireOnce(t, got, w.expected)
	t.Logf("%d changes (50 snapshot rows), each once, across 2 failures and stop → run -s", len(w.expected))
}

// TestEnvelope: the records are Debezium envelopes with the primary key as
// the record's key and the commit time as its event time; snapshot rows
// come first, then the changes in commit order; before is the whole old
// row under REPLICA IDENTITY FULL and only the key under DEFAULT.
func TestEnvelope(t *testing.T) {
	t.Parallel()
	url := database(t)
	db := connect(t, url)
	mustExec(t, db, "CREATE TABLE full_t (id int PRIMARY KEY, name text, price numeric, ok boolean, doc jsonb, f float8)")
	mustExec(t, db, "ALTER TABLE full_t REPLICA IDENTITY FULL")
	mustExec(t, db, "CREATE SCHEMA s2")
	mustExec(t, db, "CREATE TABLE s2.keyed (a text, b int, x text, PRIMARY KEY (a, b))")
	mustExec(t, db, `INSERT INTO full_t VALUES (1, 'snap', 1.50, true, '{"k": [1]}', 'NaN')`)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: env
checkpointing: {interval: 1h}
operators:
  - {uid: in, type: postgres-cdc, url: "%s", tables: [full_t, s2.keyed], publication: env_pub}
  - {uid: out, from: [in], type: test-collect, name: %s}
`, url, name), runtimetest.Options{Types: testTypes})
	defer runtimetest.Cancel(t, waitFor, j)
	runtimetest.WaitCollected(t, waitFor, name, 1)
	mustExec(t, db, "INSERT INTO full_t VALUES (2, 'two', 2, false, null, 2.5)")
	mustExec(t, db, "UPDATE full_t SET name = 'TWO' WHERE id = 2")
	mustExec(t, db, "DELETE FROM full_t WHERE id = 1")
	mustExec(t, db, "INSERT INTO s2.keyed VALUES ('k', 7, 'x')")
	mustExec(t, db, "UPDATE s2.keyed SET x = 'y'")
	mustExec(t, db, "DELETE FROM s2.keyed")
	runtimetest.WaitCollected(t, waitFor, name, 7)
	vals := runtimetest.Values(name)
	want := []string{
		`{"before":null,"after":{"id":1,"name":"snap","price":1.50,"ok":true,"doc":{"k": [1]},"f":"NaN"},"op":"r"}`,
		`{"before":null,"after":{"id":2,"name":"two","price":2,"ok":false,"doc":null,"f":2.5},"op":"c"}`,
		`{"before":{"id":2,"name":"two","price":2,"ok":false,"doc":null,"f":2.5},"after":{"id":2,"name":"TWO","price":2,"ok":false,"doc":null,"f":2.5},"op":"u"}`,
		`{"before":{"id":1,"name":"snap","price":1.50,"ok":true,"doc":{"k": [1]},"f":"NaN"},"after":null,"op":"d"}`,
		`{"before":null,"after":{"a":"k","b":7,"x":"x"},"op":"c"}`,
		`{"before":null,"after":{"a":"k","b":7,"x":"y"},"op":"u"}`,
		`{"before":{"a":"k","b":7,"x":null},"after":null,"op":"d"}`,
	}
	require.Len(t, vals, len(want))
	for i, v := range vals {
		// The envelope without source and ts_ms, checked below.
		cut := v[:strings.Index(v, `,"source":`)] + `,"op":` + v[strings.Index(v, `"op":`)+5:strings.LastIndex(v, `,"ts_ms":`)] + "}"
		require.Equal(t, want[i], cut, "record %d: %s", i, v)
		e := parse(t, v)
		require.NotZero(t, e.Source.LSN)
		require.NotZero(t, e.Source.TsMs)
		require.NotZero(t, e.TsMs)
		if i == 0 {
			require.Equal(t, "true", e.Source.Snapshot)
			require.Nil(t, e.Source.TxID)
		} else {
			require.Equal(t, "false", e.Source.Snapshot)
			require.NotNil(t, e.Source.TxID)
		}
	}
	require.Equal(t, "public", parse(t, vals[1]).Source.Schema)
	require.Equal(t, "keyed", parse(t, vals[4]).Source.Table)
	require.Equal(t, "s2", parse(t, vals[4]).Source.Schema)
	_ = context.Background()
}

// TestDroppedSlot: a slot dropped while the job runs fails the job at once
// (no restart can bring the changes back), saying what to do.
func TestDroppedSlot(t *testing.T) {
	t.Parallel()
	url := database(t)
	db := connect(t, url)
	mustExec(t, db, "CREATE TABLE items (id int PRIMARY KEY, v int)")
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: dropped
checkpointing: {interval: 50ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 10ms}
operators:
  - {uid: in, type: postgres-cdc, url: "%s", tables: [items], slot: dropped_slot, snapshot: never}
  - {uid: out, from: [in], type: test-collect, name: %s}
`, url, name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	waitSlotActive(t, db, "dropped_slot")
	mustExec(t, db, "INSERT INTO items VALUES (1, 1)")
	runtimetest.WaitCollected(t, waitFor, name, 1)
	runtimetest.WaitCheckpoint(t, waitFor, j)
	// The job holds the slot: end its connection and drop the slot before
	// the restarted source takes it again.
	runtimetest.WaitUntil(t, waitFor, "slot dropped", func() bool {
		_, _ = db.Exec(context.Background(), "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'dropped_slot' AND active_pid IS NOT NULL")
		_, err := db.Exec(context.Background(), "SELECT pg_drop_replication_slot('dropped_slot')")
		return err == nil
	})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	require.Contains(t, j.Info().Error, "replication slot dropped_slot does not exist (dropped?)")
	require.Contains(t, j.Info().Error, "Start the job without this checkpoint")
}

// TestPostgresRestart: PostgreSQL stopped (fast shutdown, then killed
// outright) and started again while the job runs: the job restarts by its
// strategy, resumes at its checkpoint's position, and every change is in
// the finished files once.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	db := connect(t, srv.URL(""))
	// The test server commits asynchronously: an immediate shutdown would
	// lose the last commits, which the writer counts as made.
	mustExec(t, db, "SET synchronous_commit = on")
	w := setupItems(t, db, 10)
	out, dir := t.TempDir(), t.TempDir()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: restart
checkpointing: {interval: 100ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 50ms}
operators:
  - {uid: in, type: postgres-cdc, url: "%s", tables: [items], slot: restart_test}
  - {uid: out, type: file, from: [in], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, srv.URL(""), out), runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir})
	waitSlotActive(t, db, "restart_test")
	w.run(t, 200, 1000)
	for _, stop := range []func() error{srv.Stop, srv.Kill} {
		runtimetest.WaitCheckpoint(t, waitFor, j)
		require.NoError(t, stop())
		require.NoError(t, srv.Start())
		db = connect(t, srv.URL(""))
		mustExec(t, db, "SET synchronous_commit = on")
		w.c = db
		w.run(t, 200, 1000)
	}
	runtimetest.WaitUntil(t, waitFor, "all changes in finished files", func() bool {
		return len(runtimetest.FinishedLines(t, out)) >= len(w.expected)
	})
	_, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))
	lines := runtimetest.FinishedLines(t, out)
	got := make([]string, len(lines))
	for i, l := range lines {
		got[i] = changeID(t, l)
	}
	requireOnce(t, got, w.expected)
}
