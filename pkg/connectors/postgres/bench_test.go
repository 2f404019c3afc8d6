package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// BenchmarkSinkVsCopy compares the exactly-once sink (datagen format:
// events → postgres, 1 s checkpoints, prepared transactions) with a plain
// Go program that COPYs the same rows over pgx in batches of 5,000 into
// the same server, in the same run; the rows of the plain program are
// built before its clock starts. It prints rows/s and the ratio.
// Run it with: go test -run '^$' -bench SinkVsCopy -benchtime 1x ./pkg/connectors/postgres/
func BenchmarkSinkVsCopy(b *testing.B) {
	if raceEnabled {
		b.Skip("throughput measurement: not under -race")
	}
	const n = 2_000_000
	url := database(b)
	exec(b, url, `CREATE TABLE events (idx bigint, "user" text, amount bigint, ts bigint)`)
	rows := eventRows(b, n)
	for _, par := range []int{1, 2} {
		var plain, eo, alo float64
		for range 2 { // best of two, alternating
			plain = max(plain, copyLoop(b, url, rows))
			eo = max(eo, sinkRun(b, url, n, par, "exactly-once"))
			alo = max(alo, sinkRun(b, url, n, par, "at-least-once"))
		}
		b.Logf("%d rows (idx, user, amount, ts), sink parallelism %d:", n, par)
		b.Logf("  plain pgx CopyFrom, batches of 5000, one connection: %9.0f rows/s", plain)
		b.Logf("  postgres sink exactly-once (1 s checkpoints):        %9.0f rows/s  ratio %.2f", eo, eo/plain)
		b.Logf("  postgres sink at-least-once (1 s checkpoints):       %9.0f rows/s  ratio %.2f", alo, alo/plain)
		b.ReportMetric(eo/plain, fmt.Sprintf("ratio-eo-p%d", par))
	}
}

func eventRows(t testing.TB, n int) [][]any {
	g, err := datagen.NewEvents(datagen.DefaultEventOptions())
	require.NoError(t, err)
	rows := make([][]any, n)
	for i := range rows {
		e := g.At(int64(i + 1))
		rows[i] = []any{e.Idx, g.User(e), e.Amount, e.TS}
	}
	return rows
}

// copyLoop truncates the table and COPYs rows in batches; rows/s.
func copyLoop(t testing.TB, url string, rows [][]any) float64 {
	exec(t, url, "TRUNCATE events")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	start := time.Now()
	for i := 0; i < len(rows); i += 5000 {
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"idx", "user", "amount", "ts"}, pgx.CopyFromRows(rows[i:min(i+5000, len(rows))]))
		require.NoError(t, err)
	}
	return float64(len(rows)) / time.Since(start).Seconds()
}

// sinkRun truncates the table and runs the bounded job; rows/s.
func sinkRun(t testing.TB, url string, n, par int, guarantee string) float64 {
	exec(t, url, "TRUNCATE events")
	start := time.Now()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: pg-bench
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen, count: %d, format: events}
  - {uid: out, type: postgres, from: [gen], parallelism: %d, url: %q, table: events, deliveryGuarantee: %s}
`, n, par, url, guarantee), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	finished(t, j)
	elapsed := time.Since(start)
	require.Equal(t, []int64{int64(n)}, query(t, url, "SELECT count(*) FROM events"))
	return float64(n) / elapsed.Seconds()
}
