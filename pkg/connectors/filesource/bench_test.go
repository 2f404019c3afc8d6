package filesource

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

const (
	benchFiles = 8
	benchLines = 125_000 // per file: 1 M records in all
)

// benchData writes the same records as JSON lines and as CSV (with a
// header) under two directories of dir.
func benchData(b *testing.B, dir string) (jsonDir, csvDir string) {
	jsonDir, csvDir = filepath.Join(dir, "json"), filepath.Join(dir, "csv")
	require.NoError(b, os.MkdirAll(jsonDir, 0o755))
	require.NoError(b, os.MkdirAll(csvDir, 0o755))
	for f := range benchFiles {
		var j, c strings.Builder
		c.WriteString("id,user,amount,ts\n")
		for i := range benchLines {
			n := f*benchLines + i
			fmt.Fprintf(&j, `{"id":%d,"user":"u%d","amount":%d,"ts":%d}`+"\n", n, n%1000, n%997, 1767225600000+int64(n))
			fmt.Fprintf(&c, "%d,u%d,%d,%d\n", n, n%1000, n%997, 1767225600000+int64(n))
		}
		require.NoError(b, os.WriteFile(filepath.Join(jsonDir, fmt.Sprintf("f%d.jsonl", f)), []byte(j.String()), 0o644))
		require.NoError(b, os.WriteFile(filepath.Join(csvDir, fmt.Sprintf("f%d.csv", f)), []byte(c.String()), 0o644))
	}
	return jsonDir, csvDir
}

// plainLoop reads every file of dir with a bufio.Scanner (json: checking
// each line with json.Valid; csv: an encoding/csv Reader reusing its
// record) and returns records/s.
func plainLoop(b *testing.B, dir, kind string, reps int) float64 {
	entries, err := os.ReadDir(dir)
	require.NoError(b, err)
	start := time.Now()
	n := 0
	for range reps {
		n += plainPass(b, dir, kind, entries)
	}
	require.Equal(b, reps*benchFiles*benchLines, n)
	return float64(n) / time.Since(start).Seconds()
}

func plainPass(b *testing.B, dir, kind string, entries []os.DirEntry) int {
	n := 0
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		require.NoError(b, err)
		if kind == "csv" {
			r := csv.NewReader(bufio.NewReaderSize(f, 256<<10))
			r.ReuseRecord = true
			if _, err := r.Read(); err != nil { // the header
				b.Fatal(err)
			}
			for {
				_, err := r.Read()
				if err == io.EOF {
					break
				}
				require.NoError(b, err)
				n++
			}
		} else {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 256<<10), 1<<20)
			for sc.Scan() {
				if kind == "json" && !json.Valid(sc.Bytes()) {
					b.Fatal("invalid")
				}
				n++
			}
			require.NoError(b, sc.Err())
		}
		require.NoError(b, f.Close())
	}
	return n
}

// sourceLoop polls one subtask of the file source over dir in batches of
// 512, recycling Values as the engine does, and returns records/s.
func sourceLoop(b *testing.B, dir string, f Format, reps int) float64 {
	start := time.Now()
	n := 0
	for range reps {
		n += sourcePass(b, dir, f)
	}
	require.Equal(b, reps*benchFiles*benchLines, n)
	return float64(n) / time.Since(start).Seconds()
}

func sourcePass(b *testing.B, dir string, f Format) int {
	set := &settings{root: dir, format: f, skipped: new(atomic.Int64)}
	src := openSubtasks(b, vfs.Default, set, 1, nil)[0]
	n := 0
	bt := runtime.NewBatch() // reused, as the engine's pool does
	for {
		bt.Reset()
		err := src.Poll(bt)
		n += len(bt.Records)
		src.RecycleValues()
		if err != nil {
			require.ErrorIs(b, err, runtime.ErrEndOfInput)
			return n
		}
	}
}

// jobRate runs a bounded job as a user writes it, file source → discard
// (the SQL planner's blackhole), or with filter, file source → a filter
// keeping every record → discard, reps times, and returns records/s from
// submit to FINISHED. The job's defaults hold: no chaining, so each
// operator runs on its own goroutine and every batch crosses a channel.
func jobRate(b *testing.B, dir, format string, filter bool, reps int) float64 {
	ops := fmt.Sprintf("  - {uid: in, type: file, path: %q, format: %s}\n", dir, format)
	from := "in"
	if filter {
		ops += "  - {uid: keep, type: filter, from: [in], expr: \"true\"}\n"
		from = "keep"
	}
	spec := "name: file-source-bench\noperators:\n" + ops + fmt.Sprintf("  - {uid: out, type: discard, from: [%s]}\n", from)
	start := time.Now()
	for range reps {
		j := runtimetest.Start(b, spec, runtimetest.Options{Types: testTypes})
		require.Equal(b, api.StateFinished, runtimetest.Wait(b, j, 5*time.Minute), j.Info().Error)
		require.Equal(b, int64(benchFiles*benchLines), recordsIn(j, "out"))
	}
	return float64(reps*benchFiles*benchLines) / time.Since(start).Seconds()
}

// recordsIn is how many records operator uid's subtasks took in.
func recordsIn(j *engine.Job, uid string) int64 {
	for _, o := range j.Info().Operators {
		if o.UID == uid {
			return o.RecordsIn
		}
	}
	return -1
}

// BenchmarkSourceVsPlainLoop compares the file source with a plain Go loop
// reading the same files (1 M records of ~70 bytes, 8 files, in the page
// cache), in the same run, interleaved: the source's Poll loop alone, and
// bounded jobs as a user writes them (jobRate) from submit to FINISHED:
// file → discard, and file → filter → discard.
// Run it with: go test -run '^$' -bench SourceVsPlainLoop -benchtime 1x ./pkg/connectors/filesource/
func BenchmarkSourceVsPlainLoop(b *testing.B) {
	if raceEnabled {
		b.Skip("throughput measurement: not under -race")
	}
	jsonDir, csvDir := benchData(b, b.TempDir())
	policy := decodePolicy{skipped: new(atomic.Int64)}
	for _, c := range []struct {
		format, dir, plain string
		f                  Format
		reps               int // passes per measurement of the loops: ~0.3 s each
		jobReps            int // jobs per measurement of a job
	}{
		{"lines", jsonDir, "bufio.Scanner", &lineFormat{policy: policy}, 20, 4},
		{"json", jsonDir, "bufio.Scanner + json.Valid", &lineFormat{json: true, policy: policy}, 1, 1},
		{"csv", csvDir, "encoding/csv (ReuseRecord, no JSON built)", &csvFormat{delim: ',', header: true, infer: true, policy: policy}, 1, 1},
	} {
		// Interleaved rounds; the ratio of each round, and their median
		// (the machine is shared: a round is compared within itself).
		// Each measurement starts after a collection, so none pays for
		// the garbage of the one before.
		var plain, jobs, filters, srcRatio, jobRatio, filterRatio []float64
		for range 5 {
			goruntime.GC()
			p := plainLoop(b, c.dir, c.format, c.reps)
			goruntime.GC()
			sr := sourceLoop(b, c.dir, c.f, c.reps)
			goruntime.GC()
			jr := jobRate(b, c.dir, c.format, false, c.jobReps)
			goruntime.GC()
			fr := jobRate(b, c.dir, c.format, true, c.jobReps)
			plain, jobs, filters = append(plain, p), append(jobs, jr), append(filters, fr)
			srcRatio, jobRatio, filterRatio = append(srcRatio, sr/p), append(jobRatio, jr/p), append(filterRatio, fr/p)
		}
		b.Logf("format %-5s plain loop (%s) median %5.2f M records/s; ratios to it, median of 5 rounds (range): "+
			"source Poll loop %.2f (%.2f–%.2f), job file→discard %.2f (%.2f–%.2f), job file→filter→discard %.2f (%.2f–%.2f); "+
			"jobs' medians %.2f and %.2f M records/s",
			c.format, c.plain, median(plain)/1e6, median(srcRatio), slices.Min(srcRatio), slices.Max(srcRatio),
			median(jobRatio), slices.Min(jobRatio), slices.Max(jobRatio),
			median(filterRatio), slices.Min(filterRatio), slices.Max(filterRatio), median(jobs)/1e6, median(filters)/1e6)
	}
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}
