package engine_test

import (
	goruntime "runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process used so far (user + system): on a
// shared, loaded machine the wall clock measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
		start := cpuTime()
		runChain(b, n, ops, "raw")
		return cpuTime() - start
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
