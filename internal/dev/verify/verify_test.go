package verify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// idxLines renders {"idx": N} lines for from..to.
func idxLines(from, to int64) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "{\"idx\": %d}\n", i)
	}
	return b.String()
}

func files(m map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range m {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func TestRun(t *testing.T) {
	tests := []struct {
		name  string
		field string
		files map[string]string
		want  Report
	}{
		{
			name:  "contiguous across buckets",
			field: "idx",
			files: map[string]string{
				"2024-01-01--10/part-0-0": idxLines(1, 50),
				"2024-01-01--10/part-0-1": idxLines(51, 80),
				"2024-01-01--11/part-0-2": idxLines(81, 100),
			},
			want: Report{Files: 3, Records: 100, Distinct: 100, First: 1, Last: 100},
		},
		{
			name:  "gaps",
			field: "idx",
			files: map[string]string{
				"part-0-0": idxLines(1, 9) + idxLines(12, 20),
				"part-0-1": idxLines(30, 30) + idxLines(32, 40),
			},
			want: Report{
				Files: 2, Records: 28, Distinct: 28, First: 1, Last: 40,
				Gaps: []Range{{10, 11}, {21, 29}, {31, 31}}, GapCount: 12, GapRanges: 3,
			},
		},
		{
			name:  "duplicates",
			field: "idx",
			files: map[string]string{
				"part-0-0": idxLines(1, 10),
				"part-0-1": idxLines(8, 12) + idxLines(12, 12),
			},
			want: Report{
				Files: 2, Records: 16, Distinct: 12, First: 1, Last: 12,
				Duplicates: 4, DuplicateSamples: []int64{8, 9, 10, 12},
			},
		},
		{
			name:  "hidden files and directories ignored",
			field: "idx",
			files: map[string]string{
				"b/part-0-0":                     idxLines(1, 5),
				"b/.part-0-1.inprogress.abc":     idxLines(6, 9),
				"b/.part-0-1.pending":            idxLines(1, 3),
				".staging/part-0-9":              idxLines(100, 200),
				"b/.hidden/part-0-7":             "garbage\n",
				"b/part-0-1":                     idxLines(6, 9),
				"b/.part-0-2.inprogress.deadbee": "{\"idx\": 1",
			},
			want: Report{Files: 2, Records: 9, Distinct: 9, First: 1, Last: 9},
		},
		{
			name:  "unparseable lines",
			field: "idx",
			files: map[string]string{
				"part-0-0": "{\"idx\": 1}\nnot json\n{\"idx\": \"2\"}\n{\"other\": 2}\n{\"idx\": 2.5}\n\n{\"idx\": 2}\n[1]\n",
			},
			want: Report{
				Files: 1, Records: 2, Distinct: 2, First: 1, Last: 2,
				Unparseable: 6, UnparseableSamples: []string{
					"part-0-0:2: not json",
					"part-0-0:3: {\"idx\": \"2\"}",
					"part-0-0:4: {\"other\": 2}",
					"part-0-0:5: {\"idx\": 2.5}",
					"part-0-0:6: \"\"",
					"part-0-0:8: [1]",
				},
			},
		},
		{
			name:  "json fallback for other shapes",
			field: "idx",
			files: map[string]string{
				"part-0-0": "{\"ts\": 5, \"idx\": 1}\n{\"idx\":2,\"x\":{\"idx\":9}}\n  {\t\"idx\" : 3 }  \r\n{\"idx\": 4}",
			},
			want: Report{Files: 1, Records: 4, Distinct: 4, First: 1, Last: 4},
		},
		{
			name:  "plain integers",
			files: map[string]string{"part-0-0": "3\n1\n2\n-1\n0\n"},
			want:  Report{Files: 1, Records: 5, Distinct: 5, First: -1, Last: 3},
		},
		{
			name: "plain integers, unparseable",
			files: map[string]string{
				"part-0-0": "1\n{\"idx\": 2}\n99999999999999999999\n3\n",
			},
			want: Report{
				Files: 1, Records: 2, Distinct: 2, First: 1, Last: 3,
				Gaps: []Range{{2, 2}}, GapCount: 1, GapRanges: 1,
				Unparseable: 2, UnparseableSamples: []string{
					"part-0-0:2: {\"idx\": 2}",
					"part-0-0:3: 99999999999999999999",
				},
			},
		},
		{
			name:  "empty",
			field: "idx",
			files: map[string]string{},
			want:  Report{},
		},
		{
			name:  "only in-progress files",
			field: "idx",
			files: map[string]string{"b/.part-0-0.inprogress.x": idxLines(1, 3), "b/part-0-0": ""},
			want:  Report{Files: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Run(Options{Path: "out", Field: tt.field, FS: files(tt.files)})
			require.NoError(t, err)
			want := tt.want
			want.Gaps = nonNil(want.Gaps)
			want.DuplicateSamples = nonNil(want.DuplicateSamples)
			want.UnparseableSamples = nonNil(want.UnparseableSamples)
			assert.Equal(t, &want, got)
			assert.Equal(t, want.GapCount == 0 && want.Duplicates == 0 && want.Unparseable == 0, got.OK())
		})
	}
}

func TestRunGapsCappedButCounted(t *testing.T) {
	var b strings.Builder
	for i := int64(0); i < 100; i++ {
		fmt.Fprintf(&b, "%d\n", i*3) // 0, 3, 6, …: two missing after each
	}
	got, err := Run(Options{Path: "out", FS: files(map[string]string{"f": b.String()})})
	require.NoError(t, err)
	assert.Equal(t, int64(99), got.GapRanges)
	assert.Equal(t, int64(198), got.GapCount)
	assert.Len(t, got.Gaps, maxListedGaps)
	assert.Equal(t, Range{1, 2}, got.Gaps[0])
}

func TestRunSamplesCapped(t *testing.T) {
	got, err := Run(Options{Path: "out", Field: "idx", FS: files(map[string]string{
		"f": strings.Repeat("x\n", 50) + strings.Repeat(idxLines(1, 1), 50),
	})})
	require.NoError(t, err)
	assert.Equal(t, int64(50), got.Unparseable)
	assert.Len(t, got.UnparseableSamples, maxSamples)
	assert.Equal(t, int64(49), got.Duplicates)
	assert.Len(t, got.DuplicateSamples, maxSamples)
}

func TestRunOverlongLine(t *testing.T) {
	long := "{\"idx\": 2, \"pad\": \"" + strings.Repeat("x", 3*readBufferSize) + "\"}\n"
	got, err := Run(Options{Path: "out", Field: "idx", FS: files(map[string]string{
		"f": idxLines(1, 1) + long + idxLines(3, 3),
	})})
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Records)
	assert.Equal(t, int64(1), got.Unparseable)
	require.Len(t, got.UnparseableSamples, 1)
	assert.True(t, strings.HasPrefix(got.UnparseableSamples[0], "f:2: {\"idx\": 2, \"pad\""))
	assert.True(t, strings.HasSuffix(got.UnparseableSamples[0], "…"))
}

func TestRunOnDisk(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	write("2024-01-01--10/part-0-0", idxLines(1, 10))
	write("2024-01-01--10/.part-0-1.inprogress.1f3", idxLines(11, 12))
	write("2024-01-01--11/part-0-1", idxLines(11, 20))
	got, err := Run(Options{Path: dir, Field: "idx"})
	require.NoError(t, err)
	assert.True(t, got.OK())
	assert.Equal(t, 2, got.Files)
	assert.Equal(t, Range{1, 20}, Range{got.First, got.Last})

	_, err = Run(Options{Path: filepath.Join(dir, "missing")})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = Run(Options{Path: filepath.Join(dir, "2024-01-01--10", "part-0-0")})
	assert.ErrorContains(t, err, "is not a directory")
	_, err = Run(Options{})
	assert.ErrorContains(t, err, "no path")
}

func TestWriteText(t *testing.T) {
	tests := []struct {
		name string
		r    Report
		want string
	}{
		{
			name: "ok",
			r:    Report{Files: 3, Records: 12345, Distinct: 12345, First: 1, Last: 12345},
			want: "records 1..12345: 12345 records in 3 files, 0 gaps, 0 duplicates — OK\n",
		},
		{
			name: "empty",
			r:    Report{},
			want: "no records in 0 files — OK\n",
		},
		{
			name: "everything wrong",
			r: Report{
				Files: 1, Records: 10, Distinct: 9, First: 1, Last: 14,
				Gaps: []Range{{5, 7}, {9, 9}}, GapCount: 4, GapRanges: 3,
				Duplicates: 1, DuplicateSamples: []int64{3},
				Unparseable: 2, UnparseableSamples: []string{"a:1: x", "a:2: y"},
			},
			want: "records 1..14: 10 records in 1 file, 3 gaps (4 missing), 1 duplicate, 2 unparseable — NOT OK\n" +
				"  missing:\n" +
				"    5..7 (3)\n" +
				"    9 (1)\n" +
				"    … and 1 more ranges\n" +
				"  duplicates: 1 extra, e.g. 3\n" +
				"  unparseable lines: 2, e.g.\n" +
				"    a:1: x\n" +
				"    a:2: y\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tt.r.WriteText(&b)
			assert.Equal(t, tt.want, b.String())
		})
	}
}

func TestReportJSON(t *testing.T) {
	got, err := Run(Options{Path: "out", Field: "idx", FS: files(nil)})
	require.NoError(t, err)
	data, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"gaps":[]`)
	assert.Contains(t, string(data), `"unparseableSamples":[]`)
}

// writeShuffled writes records 1..n over nfiles files in bucket
// directories, shuffled by file (file f holds f+1, f+1+nfiles, …) so that
// the bitmap sees the out-of-order arrival a parallel sink produces, and
// returns the bytes written.
func writeShuffled(tb testing.TB, dir string, n, nfiles int64) int64 {
	var size int64
	for f := range nfiles {
		path := filepath.Join(dir, fmt.Sprintf("bucket-%d", f%5), fmt.Sprintf("part-%d-%d", f%4, f))
		require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
		fh, err := os.Create(path)
		require.NoError(tb, err)
		w := bufio.NewWriter(fh)
		for i := f + 1; i <= n; i += nfiles {
			fmt.Fprintf(w, "{\"idx\": %d}\n", i)
		}
		require.NoError(tb, w.Flush())
		st, err := fh.Stat()
		require.NoError(tb, err)
		size += st.Size()
		require.NoError(tb, fh.Close())
	}
	return size
}

// Records spread over 50 files, every file holding every 50th: each file
// adds to every block of the bitmap (500,000 records fill 8 blocks of
// 65,536, as 5 M fill 77). BenchmarkRunFiftyFiles measures the speed on
// 5 M, the size of a long demo run (under -race this test took 22 s at 5 M).
func TestRunShuffledAcrossFiles(t *testing.T) {
	const n, nfiles = 500_000, 50
	dir := t.TempDir()
	writeShuffled(t, dir, n, nfiles)
	got, err := Run(Options{Path: dir, Field: "idx"})
	require.NoError(t, err)
	assert.True(t, got.OK())
	assert.Equal(t, int64(n), got.Distinct)
	assert.Equal(t, Range{1, n}, Range{got.First, got.Last})
}

// BenchmarkRunFiftyFiles checks 5 M records spread over 50 files and
// reports records/s.
func BenchmarkRunFiftyFiles(b *testing.B) {
	const n, nfiles = 5_000_000, 50
	dir := b.TempDir()
	size := writeShuffled(b, dir, n, nfiles)
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		got, err := Run(Options{Path: dir, Field: "idx"})
		require.NoError(b, err)
		require.True(b, got.OK() && got.Distinct == n)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
