package file

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// BenchmarkParquetVsJSON is the parquet sink's figure: datagen (format
// events: {"idx", "user", "amount", "ts"}, declared by its schema) → file
// sink, exactly-once with 1 s checkpoints, with format parquet (columns
// from the schema, snappy) and with format json, alternately three times
// in the same run, each one's best kept; it reports both records/s and
// their ratio (goal: parquet ≥ 0.5× json). Both outputs are checked:
// every record once.
func BenchmarkParquetVsJSON(b *testing.B) {
	skipPerf(b)
	const n = 1_000_000
	src := "{uid: gen, type: datagen, count: %d, format: events, schema: {idx: int, user: string, amount: int, ts: int}}"
	var pq, js float64
	for range 3 {
		dir := b.TempDir()
		js = max(js, pipelineRateFrom(b, fmt.Sprintf(src, n), n, fmt.Sprintf("type: file, path: %q, bucket: none, format: json", dir)))
		dir = b.TempDir()
		pq = max(pq, pipelineRateFrom(b, fmt.Sprintf(src, n), n, fmt.Sprintf("type: file, path: %q, bucket: none, format: parquet", dir)))
		tbl := readDirParquet(b, dir)
		if len(tbl.rows) != n {
			b.Fatalf("parquet: %d rows, want %d", len(tbl.rows), n)
		}
	}
	b.ReportMetric(js/1e6, "M-records/s-json")
	b.ReportMetric(pq/1e6, "M-records/s-parquet")
	b.ReportMetric(pq/js, "ratio-parquet/json")
	b.Logf("datagen→file json %.2f M records/s, parquet %.2f M records/s: ratio %.2f×", js/1e6, pq/1e6, pq/js)
}

// BenchmarkParquetWrite measures the writer's per-record cost with format
// parquet (four columns, one bucket, real disk).
func BenchmarkParquetWrite(b *testing.B) {
	cols := []column{{name: "idx", kind: colInt64, nullable: true}, {name: "user", kind: colString, nullable: true},
		{name: "amount", kind: colInt64, nullable: true}, {name: "ts", kind: colInt64, nullable: true}}
	w := parquetWriter(b, vfs.Default, b.TempDir(), cols)
	r := &runtime.Record{Value: []byte(`{"idx": 1234567, "user": "user-42", "amount": 871, "ts": 1700000000123}`)}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := w.Write("bucket", r, now); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_, err := w.PreCommit(1, now)
	require.NoError(b, err)
	require.NoError(b, w.Commit(1))
	require.NoError(b, w.Close())
}
