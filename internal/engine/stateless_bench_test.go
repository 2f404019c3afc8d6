package engine_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// statelessChain is datagen → hops stateless pass-through operators →
// discard (hops 0: the source and the sink only).
func statelessChain(hops int) string {
	var b strings.Builder
	b.WriteString("name: chain\ncheckpointing: {interval: 100ms}\noperators:\n  - {uid: gen, type: datagen, rate: 1000, format: raw}\n")
	from := "gen"
	for i := range hops {
		fmt.Fprintf(&b, "  - {uid: p%d, type: test-pass, from: [%s]}\n", i, from)
		from = fmt.Sprintf("p%d", i)
	}
	fmt.Fprintf(&b, "  - {uid: out, type: discard, from: [%s]}\n", from)
	return b.String()
}

// checkpointMedian runs spec until it completed n checkpoints and returns
// their median duration (trigger to completion), on the real disk.
func checkpointMedian(b *testing.B, spec string, n int) time.Duration {
	j := runtimetest.Start(b, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: b.TempDir()})
	defer runtimetest.Cancel(b, time.Minute, j)
	var durations []int64
	deadline := time.Now().Add(3 * time.Minute)
	for len(durations) < n {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d checkpoints completed in 3 minutes", len(durations), n)
		}
		time.Sleep(50 * time.Millisecond)
		durations = durations[:0]
		for _, h := range j.Checkpoints().History {
			if h.Status == "COMPLETED" {
				durations = append(durations, h.DurationMs)
			}
		}
	}
	sort.Slice(durations, func(i, k int) bool { return durations[i] < durations[k] })
	return time.Duration(durations[len(durations)/2]) * time.Millisecond
}

// BenchmarkStatelessChainCheckpoint: the checkpoint time of a chain of
// 1,000 stateless operators against a job of a source and a sink, in the
// same run. Operators without state write no state file (their absence
// is recorded in _metadata); every one of them used to write and fsync an
// empty file at each checkpoint (8-10 s per checkpoint).
func BenchmarkStatelessChainCheckpoint(b *testing.B) {
	const hops, n = 1000, 5
	var base, long time.Duration
	for i := 0; i < b.N; i++ {
		base += checkpointMedian(b, statelessChain(0), n)
		long += checkpointMedian(b, statelessChain(hops), n)
	}
	b.ReportMetric(float64(base.Milliseconds())/float64(b.N), "ms/checkpoint(source+sink)")
	b.ReportMetric(float64(long.Milliseconds())/float64(b.N), "ms/checkpoint(1000-stateless-chain)")
	b.ReportMetric(float64(long)/float64(max(base, time.Millisecond)), "chain/source+sink")
}
