package sql_test

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

// BenchmarkSQLvsYAML runs each Nexmark query (q0, q1, q2, q11, q5, q7, q8) as SQL (configs/jobs/nexmark-sql)
// and as its YAML spec (configs/jobs/nexmark) in process, as written
// (parallelism 1, exactly-once checkpoints every 10 s, the discard sink),
// alternately, $SQLBENCH_ROUNDS times each (default 3) over
// $SQLBENCH_EVENTS events (default 2,000,000; q7 500,000), and reports the SQL job's
// throughput over the YAML job's (yaml-cpu/sql-cpu of the medians; 1 is
// parity) with each one's CPU ns per event:
//
//	go test ./internal/sql -run '^$' -bench SQLvsYAML -benchtime 1x
func BenchmarkSQLvsYAML(b *testing.B) {
	rounds := envInt("SQLBENCH_ROUNDS", 3)
	for _, q := range []string{"q0", "q1", "q2", "q11", "q5", "q7", "q8"} {
		b.Run(q, func(b *testing.B) {
			events := envInt("SQLBENCH_EVENTS", 2_000_000)
			if q == "q7" {
				// q7 as SQL keeps every bid of its window: at 2 M events
				// a round takes one to two minutes (GC over the held
				// bids), and the whole benchmark would pass go test's
				// 10-minute limit.
				events = envInt("SQLBENCH_EVENTS", 500_000)
			}
			yaml := strings.Replace(readConfig(b, "nexmark", q+".yaml"), "events: 10000000", fmt.Sprintf("events: %d", events), 1)
			script := strings.Replace(readConfig(b, "nexmark-sql", q+".sql"), "'events.num' = '10000000'", fmt.Sprintf("'events.num' = '%d'", events), 1)
			p, err := engine.PlanSQL(q+".sql", []byte(script))
			if err != nil {
				b.Fatal(err)
			}
			var ycpu, scpu []float64
			for r := 0; r < rounds; r++ {
				ycpu = append(ycpu, cpuPerEvent(b, yaml, events))
				scpu = append(scpu, cpuPerEvent(b, p.Spec, events))
			}
			y, s := median(ycpu), median(scpu)
			b.ReportMetric(y, "yaml-cpu-ns/event")
			b.ReportMetric(s, "sql-cpu-ns/event")
			b.ReportMetric(y/s, "sql/yaml-throughput")
		})
	}
}

func cpuPerEvent(b *testing.B, spec string, events int) float64 {
	c0 := runtimetest.CPUTime()
	j := runtimetest.Start(b, spec, runtimetest.Options{Types: all.Definitions(), CheckpointsDir: b.TempDir()})
	if st := runtimetest.Wait(b, j, 10*time.Minute); st != api.StateFinished {
		b.Fatal(st, j.Info().Error)
	}
	return float64(runtimetest.CPUTime()-c0) / float64(events)
}

func readConfig(b *testing.B, dir, file string) string {
	raw, err := os.ReadFile("../../configs/jobs/" + dir + "/" + file)
	if err != nil {
		b.Fatal(err)
	}
	return string(raw)
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
