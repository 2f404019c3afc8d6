package filesource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// canonical re-encodes JSON objects with sorted members, to compare
// records whatever their member order.
func canonical(t *testing.T, vals []string) []string {
	t.Helper()
	out := make([]string, len(vals))
	for i, v := range vals {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(v), &m), v)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

// Parquet written by the file sink (columns from datagen's schema) is
// read back by the file source with format parquet, across three
// failures restored from checkpoints taken in the middle of the files
// (positions are row numbers): every record once, the same values.
func TestParquetRoundTripThroughSinkAndSource(t *testing.T) {
	t.Parallel()
	pq, out := t.TempDir(), t.TempDir()
	const n = 6000
	name := runtimetest.UniqueName(t)
	defer runtimetest.Reset(name)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: to-parquet
parallelism: 2
operators:
  - {uid: gen, type: datagen, count: %d, format: events, schema: {idx: int, user: string, amount: int, ts: int}}
  - {uid: orig, type: test-collect, from: [gen], name: %s}
  - {uid: pq, type: file, from: [gen], path: %q, bucket: none, format: parquet, compression: zstd}
`, n, name, pq), runtimetest.Options{Types: slices.Concat(testTypes, datagen.Definitions())})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	want := canonical(t, runtimetest.Values(name))
	require.Len(t, want, n)

	fail := name + "-fail"
	j = runtimetest.Start(t, fmt.Sprintf(`
name: from-parquet
parallelism: 3
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: file, path: %q, format: parquet}
  - {uid: fail, type: test-fail, from: [in], name: %s, every: 1500, times: 3}
  - {uid: out, type: file, from: [fail], path: %q, rolling: {maxPartSize: 64KiB}}
`, pq, fail, out), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	require.Equal(t, int64(3), runtimetest.Fired(fail))
	t.Logf("restarts %d, checkpoints %d", j.Info().Restarts, j.LatestCheckpoint().ID)
	require.Equal(t, want, canonical(t, runtimetest.FinishedLines(t, out)))
}

// A file that is not Parquet fails the job naming it, without restarts.
func TestParquetSourceRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	jsonLines(t, in, 1, 10)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: not-parquet
checkpointing: {interval: 1s}
operators:
  - {uid: in, type: file, path: %q, format: parquet}
  - {uid: out, type: discard, from: [in]}
`, in), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, 20*time.Second))
	require.Contains(t, j.Info().Error, "not a readable Parquet file")
	require.Zero(t, j.Info().Restarts)
}

// parquetFiles writes n Parquet files of rows {f, i} below dir, in row
// groups of 7 rows, and returns every record as the source reads it.
func parquetFiles(t testing.TB, fsys vfs.FS, dir string, n int) []string {
	type row struct {
		F int64 `parquet:"f"`
		I int64 `parquet:"i"`
	}
	var all []string
	for f := range n {
		var rows []row
		for i := range 20 + 13*f {
			rows = append(rows, row{F: int64(f), I: int64(i)})
			all = append(all, fmt.Sprintf(`{"f":%d,"i":%d}`, f, i))
		}
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[row](&buf, parquet.MaxRowsPerRowGroup(7))
		_, err := w.Write(rows)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		writeFile(t, fsys, vfs.Join(dir, fmt.Sprintf("sub%d/part-%02d.parquet", f%2, f)), buf.String())
	}
	return all
}

// A snapshot taken part way through Parquet files (positions are row
// numbers, inside row groups) restored at any parallelism reads every
// row once.
func TestParquetRestoreAtAnyParallelismReadsEachRowOnce(t *testing.T) {
	fsys := vfs.NewMem()
	want := parquetFiles(t, fsys, "/in", 7)
	set := func() *settings {
		return &settings{root: "/in", format: parquetFormat{}, skipped: new(atomic.Int64)}
	}
	for _, par := range []int{1, 2, 4} {
		first := openSubtasks(t, fsys, set(), 3, nil)
		var before [][]string
		for i, s := range first {
			v, _ := poll(t, s, 23*(i+1), 5)
			before = append(before, v)
		}
		restored := openSubtasks(t, fsys, set(), par, snapshot(t, first))
		after := before
		for _, s := range restored {
			v, ended := poll(t, s, 1<<20, 64)
			require.True(t, ended, "a bounded source ends")
			after = append(after, v)
		}
		requireEachOnce(t, want, after...)
	}
}

// The same in a bucket of a real S3 server (versitygw): the footer and
// the row groups are read with ranged GETs.
func TestParquetS3ReadAndRestore(t *testing.T) {
	srv := s3test.Start(t)
	fsys := vfs.Mux(vfs.NewMem(), s3test.FS(t, srv, s3store.Options{}))
	root := "s3://" + s3test.Bucket(t, srv) + "/in"
	want := parquetFiles(t, fsys, root, 4)
	set := func() *settings {
		return &settings{root: root, format: parquetFormat{}, skipped: new(atomic.Int64)}
	}
	first := openSubtasks(t, fsys, set(), 2, nil)
	var got [][]string
	for i, s := range first {
		v, _ := poll(t, s, 30*(i+1), 7)
		got = append(got, v)
	}
	for _, s := range openSubtasks(t, fsys, set(), 3, snapshot(t, first)) {
		v, ended := poll(t, s, 1<<20, 64)
		require.True(t, ended)
		got = append(got, v)
	}
	requireEachOnce(t, want, got...)
}
