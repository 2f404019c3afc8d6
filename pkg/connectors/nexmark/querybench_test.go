package nexmark_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
)

// BenchmarkQuery runs each query spec of configs/jobs/nexmark in process,
// as written (parallelism 1, exactly-once checkpoints, the discard sink),
// over b.N events, so that a CPU profile of one query is one command:
//
//	go test ./pkg/connectors/nexmark -run '^$' -bench 'Query/q7$' -benchtime 2000000x -cpuprofile cpu.out
//
// scripts/bench-nexmark.sh is the figure of record (the real binary, CPU
// time of the daemon); this is for finding where the time goes.
func BenchmarkQuery(b *testing.B) {
	for _, q := range []string{"q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q11", "q12"} {
		b.Run(q, func(b *testing.B) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "..", "configs", "jobs", "nexmark", q+".yaml"))
			if err != nil {
				b.Fatal(err)
			}
			s := strings.Replace(string(raw), "events: 10000000", fmt.Sprintf("events: %d", b.N), 1)
			b.ResetTimer()
			c0 := runtimetest.CPUTime()
			j := runtimetest.Start(b, s, runtimetest.Options{Types: testTypes, CheckpointsDir: b.TempDir()})
			if st := runtimetest.Wait(b, j, 10*time.Minute); st != api.StateFinished {
				b.Fatal(st, j.Info().Error)
			}
			// CPU time, not wall time, is the figure that survives a busy
			// machine (and it is what the Nexmark figures count).
			b.ReportMetric(float64(runtimetest.CPUTime()-c0)/float64(b.N), "cpu-ns/event")
		})
	}
}

// BenchmarkGenerator is the generator's share of every query: Next and
// AppendJSON over b.N consecutive events, as the source and the
// hand-written programs run them.
func BenchmarkGenerator(b *testing.B) {
	g := newGen(b, nexmark.DefaultConfig())
	var e nexmark.Event
	buf := make([]byte, 0, g.MaxLen())
	b.ResetTimer()
	for n := int64(0); n < int64(b.N); n++ {
		g.Next(n, &e)
		buf = nexmark.AppendJSON(buf[:0], &e)
	}
}
