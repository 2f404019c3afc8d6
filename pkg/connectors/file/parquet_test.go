package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/transform"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// arrowTable is a Parquet file as the Apache Arrow Go reader (an
// implementation independent of the writer's) reads it: its columns'
// names and Arrow types, and its rows as Go values (nil for null).
type arrowTable struct {
	fields []string // "name: type" (nullable marked "?")
	rows   [][]any
}

func readArrow(t testing.TB, data []byte) arrowTable {
	t.Helper()
	rdr, err := pqfile.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()
	var out arrowTable
	for _, f := range tbl.Schema().Fields() {
		n := ""
		if f.Nullable {
			n = "?"
		}
		out.fields = append(out.fields, f.Name+": "+f.Type.String()+n)
	}
	out.rows = make([][]any, tbl.NumRows())
	for i := range out.rows {
		out.rows[i] = make([]any, tbl.NumCols())
	}
	for c := range int(tbl.NumCols()) {
		row := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for j := range chunk.Len() {
				var v any
				if !chunk.IsNull(j) {
					switch a := chunk.(type) {
					case *array.Int64:
						v = a.Value(j)
					case *array.Int32:
						v = a.Value(j)
					case *array.Float64:
						v = a.Value(j)
					case *array.Boolean:
						v = a.Value(j)
					case *array.String:
						v = a.Value(j)
					case *array.Timestamp:
						v = time.UnixMilli(int64(a.Value(j))).UTC()
					default:
						t.Fatalf("column %d: unexpected arrow array %T", c, chunk)
					}
				}
				out.rows[row][c] = v
				row++
			}
		}
	}
	return out
}

// finishedFiles returns the finished part files below dir (names not
// starting with "."), sorted.
func finishedFiles(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(vfs.IOFS(fsys, dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != "." {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "part-") {
			out = append(out, path.Join(dir, p))
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(out)
	return out
}

func parquetWriter(t testing.TB, fsys vfs.FS, dir string, cols []column) *writer {
	cfg := config{Dir: dir, Parallelism: 1, Format: formatParquet, Bulk: newBulkFormat(cols, codecs["snappy"]),
		Policy: policy{MaxPartSize: 1 << 40, RolloverInterval: time.Hour, InactivityInterval: time.Hour}}
	w := newWriter(fsys, cfg, zerolog.Nop(), nil)
	require.NoError(t, w.Start())
	return w
}

// TestParquetTypesReadBackByArrow writes records of every column type,
// with nulls, missing members, escapes and both timestamp forms, and
// reads the committed file back with the Arrow reader: same columns in
// the declared order, same types, same rows. Records that do not fit are
// refused one by one and leave the file as it was.
func TestParquetTypesReadBackByArrow(t *testing.T) {
	cols := []column{
		{name: "id", kind: colInt64}, {name: "n32", kind: colInt32, nullable: true},
		{name: "score", kind: colDouble}, {name: "ok", kind: colBool, nullable: true},
		{name: "name", kind: colString}, {name: "ts", kind: colTimestamp, nullable: true},
		{name: "extra", kind: colJSON, nullable: true},
	}
	mem := vfs.NewMem()
	w := parquetWriter(t, mem, "/out", cols)
	now := time.Now()
	good := []string{
		`{"id": 1, "n32": -5, "score": 1.5, "ok": true, "name": "plain", "ts": 1700000000123, "extra": {"a": [1, "x"]}}`,
		`{"name": "quote \" comma , newline \n é \u00e9", "id": -9007199254740993, "score": 2, "ok": false, "ts": "2024-05-01T12:00:00.5+02:00", "extra": "s"}`,
		`{"id": 1e3, "score": -0.25, "name": "", "n32": null, "ok": null, "ts": null, "unknown": {"deep": [1,2,{"x":"}"}]}}`,
		`  { "id" : 4 , "score" : 1E2 , "name" : "last" , "extra" : [ ] }  `,
	}
	bad := map[string]string{
		`{"id": 5, "score": 1}`:                                  `the record has no member "name", and column "name" (string) is not nullable`,
		`{"id": "6", "score": 1, "name": "x"}`:                   `column "id" is int64 and the record has a JSON string there ("6")`,
		`{"id": 7.5, "score": 1, "name": "x"}`:                   `column "id" is int64 and 7.5 is not an integer in its range`,
		`{"id": 8, "score": 1, "name": "x", "n32": 3000000000}`:  `column "n32" is int32 and 3000000000 is out of its range`,
		`{"id": 9, "score": null, "name": "x"}`:                  `column "score" (double) is not nullable and the record has null there`,
		`{"id": 10, "score": 1, "name": 5}`:                      `column "name" is string and the record has a JSON number there (5)`,
		`{"id": 11, "score": 1, "name": "x", "ts": "yesterday"}`: `column "ts" is timestamp(ms): "yesterday" is not an RFC 3339 time`,
		`[1, 2]`:        `the record is not a JSON object`,
		`{"id": 12,`:    `the record is not valid JSON`,
		`{"id": 1e400}`: `column "id" is int64 and 1e400 is not an integer in its range`,
	}
	for i, v := range good {
		require.NoError(t, w.Write("", &runtime.Record{Value: []byte(v)}, now), "record %d", i)
		for b, msg := range bad {
			if i > 0 {
				break
			}
			err := w.Write("", &runtime.Record{Value: []byte(b)}, now)
			var br *recordError
			require.True(t, errors.As(err, &br), "%s: %v", b, err)
			require.ErrorContains(t, err, msg, b)
		}
	}
	snap, err := w.PreCommit(1, now)
	require.NoError(t, err)
	require.Empty(t, snap.InProgress, "a parquet part is never in progress at a checkpoint")
	require.Len(t, snap.Pending, 1)
	require.NoError(t, w.Commit(1))
	require.NoError(t, w.Close())

	files := finishedFiles(t, mem, "/out")
	require.Equal(t, []string{"/out/part-0-0"}, files)
	data, err := vfs.ReadFile(mem, files[0])
	require.NoError(t, err)
	require.Equal(t, snap.Pending[0].Size, int64(len(data)))
	tbl := readArrow(t, data)
	require.Equal(t, []string{"id: int64", "n32: int32?", "score: float64", "ok: bool?", "name: utf8",
		"ts: timestamp[ms, tz=UTC]?", "extra: utf8?"}, tbl.fields)
	ts := func(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
	require.Equal(t, [][]any{
		{int64(1), int32(-5), 1.5, true, "plain", ts(1700000000123), `{"a": [1, "x"]}`},
		{int64(-9007199254740993), nil, 2.0, false, "quote \" comma , newline \n é é", ts(1714557600500), `"s"`},
		{int64(1000), nil, -0.25, nil, "", nil, nil},
		{int64(4), nil, 100.0, nil, "last", nil, "[ ]"},
	}, tbl.rows)
}

// TestParquetRollsAtEveryCheckpoint: each checkpoint finishes every part
// (a complete Parquet file each, committed on completion), whatever the
// rolling policy says, and an empty interval leaves no file.
func TestParquetRollsAtEveryCheckpoint(t *testing.T) {
	mem := vfs.NewMem()
	w := parquetWriter(t, mem, "/out", []column{{name: "idx", kind: colInt64}})
	now := time.Now()
	next := int64(1)
	for chk := int64(1); chk <= 4; chk++ {
		for _, bucket := range []string{"a", "b"} {
			if chk == 3 {
				break // nothing written: nothing to finish
			}
			for range 100 {
				require.NoError(t, w.Write(bucket, &runtime.Record{Value: fmt.Appendf(nil, `{"idx": %d}`, next)}, now))
				next++
			}
		}
		snap, err := w.PreCommit(chk, now)
		require.NoError(t, err)
		require.Empty(t, snap.InProgress)
		require.NoError(t, w.Commit(chk))
	}
	require.NoError(t, w.Close())
	files := finishedFiles(t, mem, "/out")
	require.Len(t, files, 6)
	var got []int64
	for _, f := range files {
		data, err := vfs.ReadFile(mem, f)
		require.NoError(t, err)
		for _, r := range readArrow(t, data).rows {
			got = append(got, r[0].(int64))
		}
	}
	slices.Sort(got)
	require.Len(t, got, int(next-1))
	for i, v := range got {
		require.Equal(t, int64(i+1), v)
	}
}

func TestParquetOptionsErrorsAtTheirLines(t *testing.T) {
	_, err := engine.Compile(testRegistry, "job.yaml", []byte(`name: bad
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen}
  - uid: out
    type: file
    from: [gen]
    path: /tmp/x
    format: parquet
    compression: lzo
    columns:
      - {name: id, type: int}
      - {name: id, type: string}
      - {name: a.b, type: double}
      - {name: t, type: timestamp(us)}
      - {name: f, type: float}
  - {uid: noschema, type: file, from: [gen], path: /tmp/y, format: parquet}
  - {uid: notparquet, type: file, from: [gen], path: /tmp/z, columns: [{name: a, type: string}]}
  - {uid: names, type: file, from: [gen], path: /tmp/w, format: parquet, columns: [id, name]}
`), engine.Defaults{})
	require.Error(t, err)
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		`job.yaml:10:18: operators[1].compression: must be snappy, zstd, gzip or none, got "lzo"`,
		`job.yaml:12:26: operators[1].columns[0].type: unknown column type "int" (types: int64 (bigint), int32, double, boolean, string, timestamp(ms), json); write int64 (bigint) or int32`,
		`job.yaml:13:16: operators[1].columns[1].name: column "id" is declared twice (also columns[0])`,
		`job.yaml:14:16: operators[1].columns[2].name: must not contain '.'`,
		`job.yaml:15:25: operators[1].columns[3].type: unknown column type "timestamp(us)"`,
		`job.yaml:16:25: operators[1].columns[4].type: unknown column type "float"`,
		`job.yaml:17:`, `operators[2].format: parquet needs the records' columns: declare them on the sink`,
		`job.yaml:18:`, `operators[3].columns: applies to formats csv and parquet only (format is line)`,
		`job.yaml:19:`, `operators[4].columns[0]: format parquet needs each column's name and type: {name: id, type: int64}`,
	} {
		require.Contains(t, msg, want)
	}
}

// parquetIdx reads the idx column of a Parquet file with the Arrow
// reader (off the test goroutine: errors, not t.Fatal).
func parquetIdx(data []byte) ([]int64, error) {
	rdr, err := pqfile.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	if tbl.NumCols() != 1 || tbl.Schema().Field(0).Name != "idx" {
		return nil, fmt.Errorf("columns %v, want [idx]", tbl.Schema())
	}
	var out []int64
	for _, chunk := range tbl.Column(0).Data().Chunks() {
		a, ok := chunk.(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("idx is %s, want int64", chunk.DataType())
		}
		out = append(out, a.Int64Values()...)
	}
	return out, nil
}

// checkParquetIdx is verify.Run for Parquet output: the idx values of
// every finished file below out (names starting with "." skipped).
func checkParquetIdx(fsys vfs.FS, out string) (*verify.Report, error) {
	iofs := eocheck.FS(fsys, out)
	seen := map[int64]int{}
	r := &verify.Report{}
	err := fs.WalkDir(iofs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasPrefix(d.Name(), "part-") {
			return nil
		}
		data, err := fs.ReadFile(iofs, p)
		if err != nil {
			return err
		}
		vals, err := parquetIdx(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		r.Files++
		for _, v := range vals {
			r.Records++
			if seen[v]++; seen[v] == 2 {
				r.Duplicates++
				r.DuplicateSamples = append(r.DuplicateSamples, v)
			} else if seen[v] > 2 {
				r.Duplicates++
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	r.Distinct = int64(len(seen))
	for v := range seen {
		if r.First == 0 || v < r.First {
			r.First = v
		}
		r.Last = max(r.Last, v)
	}
	if r.Distinct > 0 {
		r.GapCount = r.Last - r.First + 1 - r.Distinct
	}
	return r, nil
}

const parquetCrashOpts = ", format: parquet, columns: [{name: idx, type: int64}]"

// TestParquetCrashSweep crashes the parquet sink's job at a sample of its
// file operations (creating, writing, finishing at the barrier,
// committing), as a process crash and as a power loss, and recovers from
// the latest complete checkpoint, on a local disk and in object storage:
// the finished Parquet files, read by the Arrow reader, hold every record
// exactly once. The restore finds no parquet part in progress (each was
// finished at its barrier): it re-commits the pending ones, deletes the
// unreferenced hidden ones, and the replay writes their records again.
func TestParquetCrashSweep(t *testing.T) {
	for _, base := range []crashLayout{crashLocal, crashObjects} {
		L := base
		L.sinkOpts, L.check = parquetCrashOpts, checkParquetIdx
		c := &sinkCrash{mem: vfs.NewMem(), k: 1 << 30, prefixes: L.sinkPrefixes}
		j, err := runCrashJob(L, c.FS(), "", "", 10000)
		require.NoError(t, err)
		require.Equal(t, api.StateFinished, j.State(), j.Info().Error)
		r, err := L.verifyOutput(L.wrap(c.mem))
		require.NoError(t, err)
		require.True(t, r.OK() && r.Records == crashRecords, "%+v", r)
		n := c.seenOps()
		stride := max(n/40, 1)
		if testing.Short() || raceEnabled {
			stride = max(n/20, 1)
		}
		var points []int
		for k := 1; k <= n+2; k += stride {
			points = append(points, k)
		}
		kinds := map[string]bool{}
		for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
			crashed, restored, unrecoverable := tally(t, sweep(L, atSinkOp, points, nil, model), kinds)
			t.Logf("%s %s: %d crash points of %d sink operations, %d recovered from a checkpoint", L.out, model, crashed, n, restored)
			require.Zero(t, unrecoverable, "committed output without a complete checkpoint")
		}
		t.Logf("%s: operation kinds crashed at: %v", L.out, slices.Sorted(maps.Keys(kinds)))
	}
}

// readDirParquet reads every finished Parquet file below dir (local).
func readDirParquet(t testing.TB, dir string) arrowTable {
	t.Helper()
	var all arrowTable
	for _, f := range finishedFiles(t, vfs.Default, dir) {
		data, err := vfs.ReadFile(vfs.Default, f)
		require.NoError(t, err)
		tbl := readArrow(t, data)
		all.fields = tbl.fields
		all.rows = append(all.rows, tbl.rows...)
	}
	return all
}

// TestParquetJobColumnsFromSourceSchema: without columns on the sink, the
// source's schema (through a filter, which keeps it) gives them: int →
// int64, nullable.
func TestParquetJobColumnsFromSourceSchema(t *testing.T) {
	dir := t.TempDir()
	spec := fmt.Sprintf(`
name: pq-schema
parallelism: 2
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, count: 3000, schema: {idx: int}}
  - {uid: keep, type: filter, from: [gen], expr: "idx %% 3 != 0"}
  - {uid: out, type: file, from: [keep], path: %q, format: parquet, compression: zstd}
`, dir)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, transform.Definitions()), CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	tbl := readDirParquet(t, dir)
	require.Equal(t, []string{"idx: int64?"}, tbl.fields)
	var got []int64
	for _, r := range tbl.rows {
		got = append(got, r[0].(int64))
	}
	slices.Sort(got)
	require.Len(t, got, 2000)
	for i, v := range got {
		require.Equal(t, int64(i/2*3+i%2+1), v)
	}
}

// TestParquetJobRecordsThatDoNotFitGoToOnError: with onError: sideOutput
// the records that do not fit the columns become dead letters (here in a
// json file sink) naming the column, and the others are written.
func TestParquetJobRecordsThatDoNotFitGoToOnError(t *testing.T) {
	dir, dead := t.TempDir(), t.TempDir()
	spec := fmt.Sprintf(`
name: pq-errors
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, count: 1000}
  - {uid: m, type: map, from: [gen], expr: 'idx %% 100 == 0 ? {"idx": "bad"} : {"idx": idx, "name": "n" + string(idx)}'}
  - {uid: out, type: file, from: [m], path: %q, format: parquet, onError: sideOutput,
     columns: [{name: idx, type: bigint}, {name: name, type: string}]}
  - {uid: dead, type: file, from: [out.errors], path: %q, format: json}
`, dir, dead)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, transform.Definitions()), CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	tbl := readDirParquet(t, dir)
	require.Equal(t, []string{"idx: int64", "name: utf8"}, tbl.fields)
	require.Len(t, tbl.rows, 990)
	for _, r := range tbl.rows {
		require.Equal(t, fmt.Sprintf("n%d", r[0]), r[1])
	}
	var letters []string
	for _, f := range finishedFiles(t, vfs.Default, dead) {
		data, err := vfs.ReadFile(vfs.Default, f)
		require.NoError(t, err)
		letters = append(letters, strings.Split(strings.TrimSpace(string(data)), "\n")...)
	}
	require.Len(t, letters, 10)
	require.Contains(t, letters[0], `column \"idx\" is int64 and the record has a JSON string there (\"bad\")`)
}

// TestParquetJobToS3 writes parquet parts into a bucket of a real S3
// server (versitygw): each part is a multipart upload completed when its
// checkpoint completes; the objects read back by Arrow hold every record
// once.
func TestParquetJobToS3(t *testing.T) {
	srv := s3test.Start(t)
	fsys := vfs.Mux(vfs.Default, s3test.FS(t, srv, s3store.Options{}))
	out := vfs.ObjectURL(s3test.Bucket(t, srv), "out")
	spec := fmt.Sprintf(`
name: pq-s3
parallelism: 2
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, count: 20000, rate: 40000}
  - {uid: out, type: file, from: [gen], path: %q, format: parquet, columns: [{name: idx, type: int64}]}
`, out)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), FS: fsys})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	r, err := checkParquetIdx(fsys, out)
	require.NoError(t, err)
	require.True(t, r.OK() && r.Records == 20000 && r.First == 1 && r.Last == 20000, "%+v", r)
	require.Greater(t, r.Files, 2, "parts finished at several checkpoints")
	t.Logf("%d parquet objects, %d records exactly once", r.Files, r.Records)
}

// TestParquetRestoresAJSONSnapshot: a snapshot of the sink in format json
// (an in-progress part with its checkpointed length) restored with format
// parquet: the part is finished as it is, in json, and committed with the
// next checkpoint; the records after the restore are in Parquet files.
func TestParquetRestoresAJSONSnapshot(t *testing.T) {
	mem := vfs.NewMem()
	now := time.Now()
	pol := policy{MaxPartSize: 1 << 40, RolloverInterval: time.Hour, InactivityInterval: time.Hour}
	w1 := newWriter(mem, config{Dir: "/out", Parallelism: 1, Format: formatJSON, Policy: pol}, zerolog.Nop(), nil)
	require.NoError(t, w1.Start())
	require.NoError(t, w1.Write("", &runtime.Record{Value: []byte(`{"idx": 1}`)}, now))
	snap, err := w1.PreCommit(1, now)
	require.NoError(t, err)
	require.Len(t, snap.InProgress, 1)
	// Written after the checkpoint: cut off by the restore.
	require.NoError(t, w1.Write("", &runtime.Record{Value: []byte(`{"idx": 2}`)}, now))
	require.NoError(t, w1.FinishAll())
	require.NoError(t, w1.Close())

	w2 := newWriter(mem, config{Dir: "/out", Parallelism: 1, Format: formatParquet, Policy: pol,
		Bulk: newBulkFormat([]column{{name: "idx", kind: colInt64}}, codecs["snappy"])}, zerolog.Nop(), nil)
	require.NoError(t, w2.Restore(restored{InProgress: snap.InProgress, Counters: []counters{snap.Counters}}, now))
	require.NoError(t, w2.Write("", &runtime.Record{Value: []byte(`{"idx": 2}`)}, now))
	snap2, err := w2.PreCommit(2, now)
	require.NoError(t, err)
	require.Empty(t, snap2.InProgress)
	require.Len(t, snap2.Pending, 2)
	require.NoError(t, w2.Commit(2))
	require.NoError(t, w2.Close())

	files := finishedFiles(t, mem, "/out")
	require.Equal(t, []string{"/out/part-0-0", "/out/part-0-1"}, files)
	data, err := vfs.ReadFile(mem, files[0])
	require.NoError(t, err)
	require.Equal(t, `{"value":{"idx": 1},"key":null,"timestamp":null}`+"\n", string(data))
	data, err = vfs.ReadFile(mem, files[1])
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(2)}}, readArrow(t, data).rows)
}
