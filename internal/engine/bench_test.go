package engine_test

import (
	"fmt"
	goruntime "runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// runChain runs datagen(count) → hops × op → discard on one core and
// returns the wall time.
func runChain(tb testing.TB, count int, ops []string, format string) time.Duration {
	var b strings.Builder
	fmt.Fprintf(&b, "name: bench\noperators:\n  - {uid: gen, type: datagen, count: %d, format: %s}\n", count, format)
	prev := "gen"
	for i, op := range ops {
		uid := fmt.Sprintf("op%d", i)
		fmt.Fprintf(&b, "  - {uid: %s, from: [%s], %s}\n", uid, prev, op)
		prev = uid
	}
	fmt.Fprintf(&b, "  - {uid: sink, type: discard, from: [%s]}\n", prev)
	start := time.Now()
	j := runtimetest.Start(tb, b.String(), runtimetest.Options{Types: testTypes})
	if s := runtimetest.Wait(tb, j, 5*time.Minute); s != api.StateFinished {
		tb.Fatalf("job %s: %s", s, j.Info().Error)
	}
	return time.Since(start)
}

// BenchmarkHops measures the runtime's cost per record and operator hop:
// datagen → discard against datagen → 3 × pass-through → discard, in the
// same run, on one core (GOMAXPROCS=1). Reported: records/s through three
// hops and ns of overhead per record per hop.
func BenchmarkHops(b *testing.B) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	const n = 2_000_000
	pass := []string{"type: test-pass", "type: test-pass", "type: test-pass"}
	var base, three time.Duration
	for i := 0; i < b.N; i++ {
		base += runChain(b, n, nil, "raw")
		three += runChain(b, n, pass, "raw")
	}
	records := float64(n * b.N)
	b.ReportMetric(records/three.Seconds(), "records/s(3hops)")
	b.ReportMetric(float64(three-base)/records/3, "ns/record/hop")
	b.ReportMetric(records/base.Seconds(), "records/s(0hops)")
}

// BenchmarkExprChain runs datagen → map (expr) → filter (expr) → discard on
// one core and reports the share of time spent outside expression
// evaluation, measured by evaluating the same expressions on the same
// records alone: five interleaved pairs in the same run, median share
// (the machine is shared and noisy).
func BenchmarkExprChain(b *testing.B) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	const n, pairs = 500_000, 5
	mapExpr, filterExpr := `{"idx": idx, "double": idx * 2}`, `idx % 2 == 0`
	ops := []string{"type: map, expr: '" + mapExpr + "'", "type: filter, expr: '" + filterExpr + "'"}
	var shares, totals, evals []float64
	for i := 0; i < b.N; i++ {
		for p := 0; p < pairs; p++ {
			total := runChain(b, n, ops, "json")
			eval := evalOnly(b, n, mapExpr, filterExpr)
			shares = append(shares, 100*float64(total-eval)/float64(total))
			totals = append(totals, float64(total)/n)
			evals = append(evals, float64(eval)/n)
		}
	}
	b.ReportMetric(median(totals), "ns/record")
	b.ReportMetric(median(evals), "ns/record-in-expr")
	b.ReportMetric(median(shares), "%outside-expr")
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// evalOnly times evaluating the chain's expressions on n records.
func evalOnly(tb testing.TB, n int, mapSrc, filterSrc string) time.Duration {
	m, err := expr.Compile(mapSrc, expr.Any)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := expr.Compile(filterSrc, expr.Bool)
	if err != nil {
		tb.Fatal(err)
	}
	recs := make([]runtime.Record, 1024)
	outs := make([]runtime.Record, 1024)
	for i := range recs {
		recs[i].Value = []byte(fmt.Sprintf(`{"idx": %d}`, i+1))
	}
	for i := range outs {
		v, _ := m.Eval(&recs[i])
		outs[i].Value, _ = expr.AppendValue(nil, v)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := m.Eval(&recs[i%1024]); err != nil {
			tb.Fatal(err)
		}
		if _, err := f.EvalBool(&outs[i%1024]); err != nil {
			tb.Fatal(err)
		}
	}
	return time.Since(start)
}
