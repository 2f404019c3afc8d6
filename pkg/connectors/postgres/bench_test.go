package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
	const n, rounds = 1_000_000, 3
	url := database(b)
	exec(b, url, `CREATE TABLE events (idx bigint, "user" text, amount bigint, ts bigint)`)
	rows := eventRows(b, n)
	for _, par := range []int{1, 2} {
		// Rounds alternate the three runs; each round's ratios compare runs
		// made back to back, and the median round is reported (the
		// machine is shared: load moves single runs by 2x).
		var plain, eo, alo, eoRatio, aloRatio []float64
		for range rounds {
			p := copyLoop(b, url, rows)
			e := sinkRun(b, url, n, par, "exactly-once")
			a := sinkRun(b, url, n, par, "at-least-once")
			plain, eo, alo = append(plain, p), append(eo, e), append(alo, a)
			eoRatio, aloRatio = append(eoRatio, e/p), append(aloRatio, a/p)
		}
		b.Logf("%d rows (idx, user, amount, ts), sink parallelism %d, medians of %d rounds (all rounds):", n, par, rounds)
		b.Logf("  plain pgx CopyFrom, batches of 5000, one connection: %9.0f rows/s %v", median(plain), rounded(plain, 0))
		b.Logf("  postgres sink exactly-once (1 s checkpoints):        %9.0f rows/s  ratio %.2f %v", median(eo), median(eoRatio), rounded(eoRatio, 2))
		b.Logf("  postgres sink at-least-once (1 s checkpoints):       %9.0f rows/s  ratio %.2f %v", median(alo), median(aloRatio), rounded(aloRatio, 2))
		b.ReportMetric(median(eoRatio), fmt.Sprintf("ratio-eo-p%d", par))
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func rounded(v []float64, digits int) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strconv.FormatFloat(x, 'f', digits, 64)
	}
	return out
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
