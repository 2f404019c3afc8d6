package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// keyedSpec is a keyed count over a deterministic bounded source; its
// final state (the highest count per key) is the same however often it is
// interrupted, if every restore is exact.
func keyedSpec(name string, par, count int) string {
	return fmt.Sprintf(`
name: cycles
parallelism: %d
operators:
  - {uid: gen, type: datagen, count: %d, rate: 40000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx %% 11"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: %s, parallelism: 1}
`, par, count, name)
}

// 20 cycles of interrupt → run -s, by savepoint then cancel or by stop;
// one cycle moves the savepoint directory first and one restores at
// another parallelism. The final counts equal an uninterrupted run's.
func TestTwentyRestoreCycles(t *testing.T) {
	const total, cycles = 60_000, 20
	for _, how := range []string{"savepoint-cancel", "stop"} {
		t.Run(how, func(t *testing.T) {
			name := fmt.Sprintf("cycles-%s-%d", how, time.Now().UnixNano())
			runtimetest.Reset(name)
			path, moved, rescaled := "", false, false
			for c := 0; c <= cycles; c++ {
				par := 2
				if c == cycles/2 {
					par, rescaled = 3, true // one restore at another parallelism
				}
				j := runtimetest.Start(t, keyedSpec(name, par, total), runtimetest.Options{Types: testTypes, Restore: path})
				if c == cycles {
					require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, time.Minute), j.Info().Error)
					break
				}
				waitRead(t, j, 1000) // of the 3,000 left per cycle
				var err error
				if how == "stop" {
					path, _, err = j.Stop(t.TempDir(), false)
				} else {
					path, _, err = j.Savepoint(t.TempDir())
					require.NoError(t, err)
					err = j.Cancel()
				}
				require.NoError(t, err)
				runtimetest.Wait(t, j, 10*time.Second)
				if c == 3 {
					dst := filepath.Join(t.TempDir(), "moved")
					require.NoError(t, os.Rename(path, dst))
					path, moved = dst, true
				}
			}
			require.True(t, moved && rescaled)
			final := runtimetest.MaxCounts(t, runtimetest.Values(name))
			require.Len(t, final, 11)
			sum := 0
			for _, n := range final {
				sum += n
			}
			require.Equal(t, total, sum, "final counts %v", final)
		})
	}
}

// Restores into changed jobs, as run -s plans them.
func TestIncompatibleRestores(t *testing.T) {
	name := fmt.Sprintf("incompatible-%d", time.Now().UnixNano())
	j := runtimetest.Start(t, keyedSpec(name, 1, 1_000_000), runtimetest.Options{Types: testTypes})
	waitRead(t, j, 1000)
	path, _, err := j.Savepoint(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, j.Cancel())
	r, err := engine.LoadRestore(vfs.Default, path)
	require.NoError(t, err)
	plan := func(spec string, allow bool) *api.RestorePlan {
		g, err := engine.Compile(testRegistry, "x.yaml", []byte(spec), engine.Defaults{})
		require.NoError(t, err)
		return engine.PlanRestore(g, r, engine.RestoreOptions{AllowNonRestored: allow})
	}
	base := func(keyedUID, extra string, maxPar int) string {
		return fmt.Sprintf(`
name: cycles
maxParallelism: %d
operators:
  - {uid: gen, type: datagen}
  - {uid: key, type: keyBy, from: [gen], expr: "idx %% 11"}
  - {uid: %s, type: count, from: [key]}
  - {uid: out, type: discard, from: [%s]}%s
`, maxPar, keyedUID, keyedUID, extra)
	}
	// Removed operator: refused without -n, accepted with it.
	removed := "\nname: cycles\noperators:\n  - {uid: gen, type: datagen}\n  - {uid: out, type: discard, from: [gen]}\n"
	require.ErrorContains(t, plan(removed, false).Err(), "cnt (type count")
	require.NoError(t, plan(removed, true).Err())
	// Renamed uid: the old state has no home (refused without -n); the
	// new uid starts empty.
	renamed := plan(base("counts", "", 128), false)
	require.ErrorContains(t, renamed.Err(), "cnt (type count")
	require.Equal(t, []string{"counts"}, renamed.New)
	// A new operator starts empty; the rest is matched.
	added := plan(base("cnt", "\n  - {uid: extra, type: discard, from: [gen]}", 128), false)
	require.NoError(t, added.Err())
	require.Equal(t, []string{"extra"}, added.New)
	// Another max parallelism cannot take keyed state.
	require.ErrorContains(t, plan(base("cnt", "", 256), true).Err(), "keep maxParallelism: 128")
}

// Every way a savepoint can be damaged is refused, naming the file, and
// never panics: each file truncated at several points, one flipped bit per
// file, each file deleted, an empty _metadata, an unknown version.
func TestCorruptSavepointsRefused(t *testing.T) {
	name := fmt.Sprintf("corrupt-%d", time.Now().UnixNano())
	j := runtimetest.Start(t, keyedSpec(name, 2, 1_000_000), runtimetest.Options{Types: testTypes})
	waitRead(t, j, 1000)
	good, _, err := j.Savepoint(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, j.Cancel())
	entries, err := os.ReadDir(good)
	require.NoError(t, err)
	cases := 0
	try := func(what, file string, damage func(dir, path string)) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "sp")
		require.NoError(t, os.CopyFS(dir, os.DirFS(good)))
		damage(dir, filepath.Join(dir, file))
		require.NotPanics(t, func() {
			_, err = engine.LoadRestore(vfs.Default, dir)
		})
		require.Error(t, err, "%s of %s was accepted", what, file)
		require.Contains(t, err.Error(), file, "%s of %s: %v", what, file, err)
		cases++
	}
	for _, e := range entries {
		file := e.Name()
		data, err := os.ReadFile(filepath.Join(good, file))
		require.NoError(t, err)
		for _, cut := range []int{0, 1, len(data) / 3, len(data) / 2, len(data) - 5, len(data) - 1} {
			try(fmt.Sprintf("truncation at %d", cut), file, func(_, p string) {
				require.NoError(t, os.WriteFile(p, data[:cut], 0o600))
			})
		}
		for _, bit := range []int{0, len(data) * 4, len(data)*8 - 1} {
			try(fmt.Sprintf("flipping bit %d", bit), file, func(_, p string) {
				d := append([]byte(nil), data...)
				d[bit/8] ^= 1 << (bit % 8)
				require.NoError(t, os.WriteFile(p, d, 0o600))
			})
		}
		try("deletion", file, func(_, p string) { require.NoError(t, os.Remove(p)) })
	}
	try("an unknown version", checkpoint.MetadataFile, func(_, p string) {
		d, err := os.ReadFile(p)
		require.NoError(t, err)
		d[8] = 99
		require.NoError(t, os.WriteFile(p, d, 0o600))
	})
	t.Logf("%d damaged savepoints refused (%d files)", cases, len(entries))
}

// BenchmarkStopLatency measures `stop` of a job with well under 1 MB of
// state, from the request to FINISHED (goal: median under 200 ms).
func BenchmarkStopLatency(b *testing.B) {
	var ds []time.Duration
	for i := 0; i < max(b.N, 7); i++ {
		name := fmt.Sprintf("stop-%d", time.Now().UnixNano())
		j := runtimetest.Start(b, keyedSpec(name, 2, 100_000_000), runtimetest.Options{Types: testTypes, CheckpointsDir: b.TempDir()})
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		if _, _, err := j.Stop(b.TempDir(), false); err != nil {
			b.Fatal(err)
		}
		runtimetest.Wait(b, j, 10*time.Second)
		ds = append(ds, time.Since(start))
		runtimetest.Reset(name)
	}
	vals := make([]float64, len(ds))
	for i, d := range ds {
		vals[i] = float64(d.Microseconds()) / 1000
	}
	b.ReportMetric(median(vals), "ms-median-stop")
}
