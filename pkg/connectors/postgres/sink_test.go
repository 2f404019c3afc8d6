package postgres_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/pgserver"
	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// A bounded job writes every record once, in prepared transactions
// committed on checkpoint completion, with the columns read from the
// JSON members by name (default) or computed by expressions.
func TestAppendExactlyOnce(t *testing.T) {
	t.Parallel()
	url := database(t)
	exec(t, url, "CREATE TABLE plain (id serial PRIMARY KEY, idx bigint NOT NULL)",
		"CREATE TABLE computed (idx bigint, half double precision, label text, at timestamptz, doc jsonb)")
	j := runtimetest.Start(t, fmt.Sprintf(`
name: append
parallelism: 2
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, count: 5000, rate: 20000}
  - {uid: out, type: postgres, from: [gen], url: %[1]q, table: plain, batchSize: 300}
  - uid: out2
    type: postgres
    from: [gen]
    url: %[1]q
    table: public.computed
    parallelism: 1
    columns: {idx: idx, half: idx / 2, label: "'n' + string(idx)", at: "idx * 1000", doc: value}
`, url), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	finished(t, j)
	lost, dup := onceEach(t, url, "plain", 5000)
	assert.Zero(t, lost+dup, "lost %d, duplicated %d", lost, dup)
	lost, dup = onceEach(t, url, "computed", 5000)
	assert.Zero(t, lost+dup, "lost %d, duplicated %d", lost, dup)
	assert.Equal(t, []int64{1}, query(t, url, `SELECT count(*) FROM computed WHERE idx = 42 AND half = 21 AND label = 'n42'
		AND at = to_timestamp(42) AND doc = '{"idx": 42}'::jsonb`))
	assert.Equal(t, []int64{0}, query(t, url, "SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()"), "every prepared transaction committed")
	m := operator(t, j, "out").Metrics
	if info := j.Info(); info.Restarts == 0 {
		assert.EqualValues(t, 5000, m["rowsWritten"])
	} else {
		// rowsWritten counts rows sent, also those of transactions a
		// failure rolled back and the replay sent again (a loaded
		// machine can fail a subtask: the table above is what counts).
		t.Logf("%d restarts (%s): %d rows sent for 5000 committed", info.Restarts, info.RootCause, m["rowsWritten"])
		assert.GreaterOrEqual(t, m["rowsWritten"], int64(5000))
	}
	assert.Positive(t, m["transactionsCommitted"])
	assert.Zero(t, m["pendingTransactions"])
}

// Upserts with keys repeated within a batch and across batches and
// checkpoints leave one row per key holding its last value.
func TestUpsertRepeatedKeys(t *testing.T) {
	t.Parallel()
	url := database(t)
	exec(t, url, "CREATE TABLE latest (k int PRIMARY KEY, idx bigint, writes int DEFAULT 1)")
	j := runtimetest.Start(t, fmt.Sprintf(`
name: upsert
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, count: 3000, rate: 20000}
  - {uid: out, type: postgres, from: [gen], url: %q, table: latest, mode: upsert, primaryKey: k,
     columns: {k: "idx %% 7", idx: idx}, batchSize: 100}
`, url), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	finished(t, j)
	assert.Equal(t, []int64{7, 3000 + 2994 + 2995 + 2996 + 2997 + 2998 + 2999}, query(t, url, "SELECT count(*), sum(idx)::bigint FROM latest"))
}

// Whatever only the user can fix is refused when the sink opens, naming
// it, and the job fails without restarting.
func TestRefusedAtOpen(t *testing.T) {
	t.Parallel()
	url := database(t)
	exec(t, url, "CREATE TABLE t (idx bigint, name text)", "CREATE TABLE nokey (k int, idx bigint)")
	for _, c := range []struct{ name, opts, want string }{
		{"missing database", "table: t, url: " + strconv.Quote(url[:strings.LastIndex(url, "/")]+"/nodb"), `database "nodb" does not exist`},
		{"missing table", "table: nope", `table nope does not exist in database 127.0.0.1:`},
		{"missing column", "table: t, columns: {idx: idx, amount: idx}", `table t has no column "amount" (its columns: idx, name)`},
		{"upsert without unique key", "table: nokey, mode: upsert, primaryKey: k, columns: {k: idx, idx: idx}",
			"needs a primary key or unique constraint of nokey on exactly primaryKey (k)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			if !strings.Contains(opts, "url:") {
				opts += ", url: " + strconv.Quote(url)
			}
			j := runtimetest.Start(t, fmt.Sprintf(`
name: refused
checkpointing: {interval: 1s}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: 10}
  - {uid: out, type: postgres, from: [gen], %s}
`, opts), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			msg := failed(t, j)
			t.Log(msg)
			assert.Contains(t, msg, c.want)
			assert.Zero(t, j.Info().Restarts, "a restart cannot fix it")
		})
	}
}

// A server that cannot prepare transactions is refused for exactly-once,
// saying how to set it; at-least-once writes there.
func TestMaxPreparedTransactionsZeroRefused(t *testing.T) {
	t.Parallel()
	srv := pgtest.StartConfig(t, pgserver.Config{Settings: []string{"max_prepared_transactions = 0"}})
	url := srv.URL("")
	exec(t, url, "CREATE TABLE t (idx bigint)")
	spec := `
name: mpt
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen, count: 100}
  - {uid: out, type: postgres, from: [gen], url: %q, table: t%s}
`
	j := runtimetest.Start(t, fmt.Sprintf(spec, url, ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	msg := failed(t, j)
	assert.Contains(t, msg, "max_prepared_transactions = 0")
	assert.Contains(t, msg, "ALTER SYSTEM SET max_prepared_transactions")
	j = runtimetest.Start(t, fmt.Sprintf(spec, url, ", deliveryGuarantee: at-least-once"), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	finished(t, j)
	assert.Equal(t, []int64{100}, query(t, url, "SELECT count(DISTINCT idx) FROM t"))
}

// At open, the prepared transactions of the sink's prefix that no
// restored snapshot names (an attempt that failed after preparing) are
// rolled back; those of other prefixes, even ones that start alike, are
// left alone.
func TestOrphansRolledBack(t *testing.T) {
	t.Parallel()
	url := database(t)
	exec(t, url, "CREATE TABLE t (idx bigint)")
	prepare := func(gid string, idx int) {
		exec(t, url, fmt.Sprintf("BEGIN; INSERT INTO t VALUES (%d); PREPARE TRANSACTION '%s'", idx, gid))
	}
	prepare("orph-0-7", -1)  // an orphan of subtask 0
	prepare("orph-3-9", -2)  // of a subtask the job no longer has (rescaled): subtask 3 mod 2
	prepare("orph-1-x", -3)  // not a gid of the prefix
	prepare("orph2-0-7", -4) // another prefix
	j := runtimetest.Start(t, fmt.Sprintf(`
name: orphans
parallelism: 2
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, count: 1000}
  - {uid: out, type: postgres, from: [gen], url: %q, table: t, transactionPrefix: orph}
`, url), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	finished(t, j)
	lost, dup := onceEach(t, url, "t", 1000)
	assert.Zero(t, lost+dup)
	assert.EqualValues(t, 2, operator(t, j, "out").Metrics["transactionsRolledBack"])
	var gids []string
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid")
	require.NoError(t, err)
	gids, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{"orph-1-x", "orph2-0-7"}, gids)
	for _, g := range gids {
		_, err := conn.Exec(ctx, "ROLLBACK PREPARED '"+g+"'")
		require.NoError(t, err)
	}
}

// Two jobs with the same transaction prefix: the second is refused while
// the first runs (each would roll back the other's prepared transactions).
func TestSecondJobOnOnePrefixRefused(t *testing.T) {
	t.Parallel()
	url := database(t)
	exec(t, url, "CREATE TABLE t (idx bigint)")
	spec := fmt.Sprintf(`
name: owner
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, rate: 100}
  - {uid: out, type: postgres, from: [gen], url: %q, table: t, transactionPrefix: shared}
`, url)
	first := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, waitFor, "the first job writes", func() bool { return query(t, url, "SELECT count(*) FROM t")[0] > 0 })
	second := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	msg := failed(t, second)
	assert.Contains(t, msg, "output owned by another job: prepared transactions shared-* (marker: flinkgo_sink_owners row \"shared\") belong to job "+first.ID())
	assert.Equal(t, "RUNNING", string(first.State()))
	runtimetest.Cancel(t, waitFor, first)
}

// Expression results reach columns of every common type: numbers into
// integer, real and numeric columns, strings parsed as the column's text
// form (uuid, numeric, date), milliseconds into timestamps, objects into
// jsonb and text, nulls as NULL.
func TestColumnTypes(t *testing.T) {
	t.Parallel()
	url := database(t)
	exec(t, url, `CREATE TABLE typed (s smallint, i int, r real, ok boolean, n numeric, ns numeric, u uuid, d date,
		ts timestamp, j json, txt text, nothing text, v varchar(10))`)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: types
operators:
  - {uid: gen, type: datagen, count: 3}
  - uid: out
    type: postgres
    from: [gen]
    url: %q
    table: typed
    columns: {s: idx, i: "idx * 1000", r: "idx / 4", ok: "idx > 1", n: "idx / 8", ns: "'12.5'",
      u: "'00000000-0000-0000-0000-00000000000' + string(idx)", d: "'2026-01-0' + string(idx)", ts: "idx * 86400000",
      j: "{a: idx, b: [1, 2]}", txt: "{a: idx}", nothing: "nil", v: "'v' + string(idx)"}
`, url), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	finished(t, j)
	assert.Equal(t, []int64{1}, query(t, url, `SELECT count(*) FROM typed WHERE s = 2 AND i = 2000 AND r = 0.5 AND ok AND n = 0.25
		AND ns = 12.5 AND u = '00000000-0000-0000-0000-000000000002' AND d = '2026-01-02' AND ts = '1970-01-03 00:00:00'
		AND j::jsonb = '{"a": 2, "b": [1, 2]}' AND txt::jsonb = '{"a": 2}' AND nothing IS NULL AND v = 'v2'`))
}
