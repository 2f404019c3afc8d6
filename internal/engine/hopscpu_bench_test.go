package engine_test

import (
	goruntime "runtime"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// BenchmarkHopsCPU is BenchmarkHops in CPU time: datagen → discard against
// datagen → 3 × pass-through → discard on one core, five interleaved
// pairs, the median of the per-record, per-hop difference. It is the
// figure that shows what the runtime's bookkeeping (records counted, time
// split into busy, backpressured and idle) costs a hop.
func BenchmarkHopsCPU(b *testing.B) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	const n, pairs = 2_000_000, 5
	pass := []string{"type: test-pass", "type: test-pass", "type: test-pass"}
	var hops, bases []float64
	cpu := func(ops []string) time.Duration {
		goruntime.GC()
		start := runtimetest.CPUTime()
		runChain(b, n, ops, "raw")
		return runtimetest.CPUTime() - start
	}
	for i := 0; i < b.N; i++ {
		for p := 0; p < pairs; p++ {
			base := cpu(nil)
			three := cpu(pass)
			bases = append(bases, float64(base)/n)
			hops = append(hops, float64(three-base)/n/3)
		}
	}
	b.ReportMetric(median(hops), "cpu-ns/record/hop")
	b.ReportMetric(median(bases), "cpu-ns/record(0hops)")
}
