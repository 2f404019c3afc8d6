package file

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func skipPerf(t testing.TB) {
	if raceEnabled {
		t.Skip("performance figures: not under -race")
	}
}

// pipelineRate runs datagen → sink (exactly-once, 1s checkpoints) for n
// records and returns records/s from submit to FINISHED.
func pipelineRate(t testing.TB, n int, sinkSpec string) float64 {
	return pipelineRateFrom(t, fmt.Sprintf("{uid: gen, type: datagen, count: %d}", n), n, sinkSpec)
}

// pipelineRateFrom is pipelineRate with the source gen as given.
func pipelineRateFrom(t testing.TB, source string, n int, sinkSpec string) float64 {
	spec := fmt.Sprintf(`
name: throughput
checkpointing: {interval: 1s}
operators:
  - %s
  - {uid: out, from: [gen], %s}
`, source, sinkSpec)
	start := time.Now()
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 5*time.Minute), j.Info().Error)
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkFileVsDiscard compares datagen → file with datagen → discard in
// the same run (the goal: file ≥ 50% of discard and ≥ 2 M
// records/s), alternating the two three times and keeping each one's best.
func BenchmarkFileVsDiscard(b *testing.B) {
	skipPerf(b)
	const n = 6_000_000
	var file, discard float64
	for range 3 {
		discard = max(discard, pipelineRate(b, n, "type: discard"))
		dir := b.TempDir()
		file = max(file, pipelineRate(b, n, fmt.Sprintf("type: file, path: %q", dir)))
		requireExactlyOnce(b, dir, nil, n)
	}
	b.Logf("datagen→discard %.2f M records/s, datagen→file %.2f M records/s: ratio %.0f%%",
		discard/1e6, file/1e6, 100*file/discard)
}

// BenchmarkCommitCost measures on the real disk the median time to
// pre-commit and commit a checkpoint that finalizes 1, 10 and 100 parts.
func BenchmarkCommitCost(b *testing.B) {
	skipPerf(b)
	for _, n := range []int{1, 10, 100} {
		var pre, commitSpread, commitOne []time.Duration
		for range 9 {
			p, c := commitCost(b, n, true)
			pre, commitSpread = append(pre, p), append(commitSpread, c)
			_, c = commitCost(b, n, false)
			commitOne = append(commitOne, c)
		}
		b.Logf("%3d part files: pre-commit (flush+fsync+close each, fsync of %d new bucket dirs) median %v; commit (rename each, fsync of %d dirs) median %v; in one bucket (one dir fsync) median %v",
			n, n, median(pre), n, median(commitSpread), median(commitOne))
	}
}

// commitCost writes one record into each of n parts (in n buckets, or
// rolled by size in one bucket) and times PreCommit and Commit.
func commitCost(t testing.TB, n int, spread bool) (pre, commit time.Duration) {
	cfg := config{Dir: t.TempDir(), Parallelism: 1, Policy: policy{MaxPartSize: 1 << 30,
		RolloverInterval: time.Hour, InactivityInterval: time.Hour, OnCheckpoint: true}, MaxOpen: 1000}
	if !spread {
		cfg.Policy.MaxPartSize = 1
	}
	w := newWriter(vfs.Default, cfg, zerolog.Nop(), nil)
	require.NoError(t, w.Start())
	now := time.Now()
	r := &runtime.Record{Value: []byte(`{"idx": 1}`)}
	for i := range n {
		bucket := "b"
		if spread {
			bucket = "b" + strconv.Itoa(i)
		}
		require.NoError(t, w.Write(bucket, r, now))
	}
	start := time.Now()
	snap, err := w.PreCommit(1, now)
	pre = time.Since(start)
	require.NoError(t, err)
	require.Len(t, snap.Pending, n)
	start = time.Now()
	require.NoError(t, w.Commit(1))
	commit = time.Since(start)
	files, err := filepath.Glob(filepath.Join(cfg.Dir, "*", "part-0-*"))
	require.NoError(t, err)
	require.Len(t, files, n)
	require.NoError(t, w.Close())
	return pre, commit
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Microsecond)
}

// BenchmarkFileSinkWrite measures the writer's per-record cost (line
// format, one bucket, real disk).
func BenchmarkFileSinkWrite(b *testing.B) {
	w := newWriter(vfs.Default, config{Dir: b.TempDir(), Parallelism: 1}, zerolog.Nop(), nil)
	require.NoError(b, w.Start())
	r := &runtime.Record{Value: []byte(`{"idx": 1234567}`)}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := w.Write("bucket", r, now); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.NoError(b, w.FinishAll())
	_, err := w.PreCommit(1, now)
	require.NoError(b, err)
	require.NoError(b, w.Commit(1))
}

// BenchmarkFileSinkPipeline and BenchmarkDiscardPipeline: datagen → sink,
// 1s checkpoints, records/s reported.
func BenchmarkFileSinkPipeline(b *testing.B) {
	b.ReportMetric(pipelineRate(b, max(b.N, 1_000_000), fmt.Sprintf("type: file, path: %q", b.TempDir())), "records/s")
}

func BenchmarkDiscardPipeline(b *testing.B) {
	b.ReportMetric(pipelineRate(b, max(b.N, 1_000_000), "type: discard"), "records/s")
}
