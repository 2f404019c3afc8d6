package engine_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// pebbleBenchEnv makes the test binary run one backend's side of
// BenchmarkPebbleVsHeap (TestPebbleVsHeapChild) and print its figures.
const pebbleBenchEnv = "FLINKGO_PEBBLE_BENCH"

// BenchmarkPebbleVsHeap runs a keyed count over many distinct keys on the
// heap backend and on pebble, each in a process of its own (the test
// binary again), and reports each one's peak RSS (VmHWM) and its ratio:
// pebble's memory is its memtables and block cache, the heap's grows with
// the keys (docs/state-backends.md). Keys: FLINKGO_PEBBLE_BENCH_KEYS,
// default 2,000,000.
func BenchmarkPebbleVsHeap(b *testing.B) {
	keys := 2_000_000
	if v := os.Getenv("FLINKGO_PEBBLE_BENCH_KEYS"); v != "" {
		keys, _ = strconv.Atoi(v)
	}
	for i := 0; i < b.N; i++ {
		rss := map[string]float64{}
		secs := map[string]float64{}
		for _, backend := range []string{api.BackendHashMap, api.BackendPebble} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPebbleVsHeapChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", pebbleBenchEnv, backend, keys))
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("%s: %v\n%s", backend, err, out)
			}
			var kb, ms int64
			for _, l := range strings.Split(string(out), "\n") {
				if _, err := fmt.Sscanf(l, "pebblebench rss_kb=%d ms=%d", &kb, &ms); err == nil {
					break
				}
			}
			if kb == 0 {
				b.Fatalf("%s printed no figures:\n%s", backend, out)
			}
			rss[backend], secs[backend] = float64(kb)/1024, float64(ms)/1000
		}
		b.ReportMetric(rss[api.BackendHashMap], "heap-peak-RSS-MB")
		b.ReportMetric(rss[api.BackendPebble], "pebble-peak-RSS-MB")
		b.ReportMetric(rss[api.BackendPebble]/rss[api.BackendHashMap], "pebble/heap-RSS")
		b.ReportMetric(secs[api.BackendHashMap], "heap-s")
		b.ReportMetric(secs[api.BackendPebble], "pebble-s")
		b.ReportMetric(secs[api.BackendHashMap]/secs[api.BackendPebble], "pebble/heap-throughput")
	}
}

// TestPebbleVsHeapChild is one side of BenchmarkPebbleVsHeap; it is
// skipped unless the benchmark runs it.
func TestPebbleVsHeapChild(t *testing.T) {
	arg := os.Getenv(pebbleBenchEnv)
	if arg == "" {
		t.Skip("run by BenchmarkPebbleVsHeap")
	}
	backend, n, _ := strings.Cut(arg, ":")
	keys, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := fmt.Sprintf(`
name: keys
stateBackend: {type: %s}
operators:
  - {uid: gen, type: datagen, count: %d, format: raw}
  - {uid: key, type: keyBy, from: [gen], expr: "value"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: discard, from: [cnt]}
`, backend, keys)
	start := time.Now()
	j := runtimetest.Start(t, spec, runtimetest.Options{FS: vfs.Default, CheckpointsDir: dir, Types: testTypes, PebbleDir: dir})
	if s := runtimetest.Wait(t, j, 5*time.Minute); s != api.StateFinished {
		t.Fatalf("job %s: %s", s, j.Info().Error)
	}
	fmt.Printf("pebblebench rss_kb=%d ms=%d\n", peakRSSKB(t), time.Since(start).Milliseconds())
}

// peakRSSKB reads the process's peak resident set size (VmHWM).
func peakRSSKB(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc: peak RSS is read on Linux only")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
