package expr

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
	rt "github.com/flinkgo/flinkgo/pkg/runtime"
)

// nexmarkEvents is the first n events of the default Nexmark generator,
// as JSON: the records BenchmarkQuery's filters and maps read.
func nexmarkEvents(tb testing.TB, n int) []*rt.Record {
	g, err := nexmark.New(nexmark.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	var e nexmark.Event
	recs := make([]*rt.Record, n)
	for i := range recs {
		g.Next(int64(i), &e)
		recs[i] = &rt.Record{Value: nexmark.AppendJSON(nil, &e)}
	}
	return recs
}

// BenchmarkNexmarkScan is the expressions of the Nexmark queries whose
// cost is the member scanner's, over the generator's event mix: the
// filter on the first member, and q0's projection of a bid.
func BenchmarkNexmarkScan(b *testing.B) {
	recs := nexmarkEvents(b, 4096)
	var bids []*rt.Record
	for _, r := range recs {
		if r.Value[14] == '2' {
			bids = append(bids, r)
		}
	}
	b.Run("filter", func(b *testing.B) {
		p, err := Compile(`event_type == 2`, Bool)
		if err != nil {
			b.Fatal(err)
		}
		cpuRun(b, func(i int) {
			if _, err := p.EvalBool(recs[i&4095]); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("q0map", func(b *testing.B) {
		p, err := Compile(`{auction: auction, bidder: bidder, price: price, dateTime: dateTime, extra: extra}`, Any)
		if err != nil {
			b.Fatal(err)
		}
		var dst []byte
		cpuRun(b, func(i int) {
			if dst, err = p.AppendValue(dst[:0], bids[i%len(bids)]); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("q2filter", func(b *testing.B) {
		p, err := Compile(`event_type == 2 && auction % 123 == 0`, Bool)
		if err != nil {
			b.Fatal(err)
		}
		cpuRun(b, func(i int) {
			if _, err := p.EvalBool(recs[i&4095]); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// threadCPU is the CPU time of the calling thread in ns (RUSAGE_THREAD):
// on a shared machine, the figure that other processes disturb least.
func threadCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuRun runs f(i) for i < b.N on one locked thread and reports its CPU
// time per call.
func cpuRun(b *testing.B, f func(i int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	c0 := threadCPU()
	for i := 0; i < b.N; i++ {
		f(i)
	}
	b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkNexmarkScanQ1(b *testing.B) {
	recs := nexmarkEvents(b, 4096)
	var bids []*rt.Record
	for _, r := range recs {
		if r.Value[14] == '2' {
			bids = append(bids, r)
		}
	}
	p, err := Compile(`{auction: auction, bidder: bidder, price: round(0.908 * price, 3), dateTime: dateTime, extra: extra}`, Any)
	if err != nil {
		b.Fatal(err)
	}
	var dst []byte
	cpuRun(b, func(i int) {
		if dst, err = p.AppendValue(dst[:0], bids[i%len(bids)]); err != nil {
			b.Fatal(err)
		}
	})
}
