package datagen

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// pollFor polls a fresh single-subtask source of proto for n records and
// returns the time it took.
func pollFor(b *testing.B, proto source, n int) time.Duration {
	s := proto
	s.count = int64(n)
	if err := s.Open(runtime.NewContext(runtime.ContextOptions{UID: "gen", Parallelism: 1, State: state.NewOperatorState()})); err != nil {
		b.Fatal(err)
	}
	batch := runtime.NewBatch()
	start := time.Now()
	for {
		batch.Reset()
		err := s.Poll(batch)
		if errors.Is(err, runtime.ErrEndOfInput) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkEventsVsJSON measures the cost of generating a record of format
// events (hashing, timestamps, formatting into the arena) against format
// json ({"idx": N}) on the polling goroutine alone: five interleaved pairs
// per iteration in the same run, medians (the machine is shared and
// noisy). Reported: ns per record of each, events records/s and events'
// throughput relative to json's.
func BenchmarkEventsVsJSON(b *testing.B) {
	const n, pairs = 1_000_000, 5
	g, err := NewEvents(shuffled())
	if err != nil {
		b.Fatal(err)
	}
	var js, ev, ratio []float64
	for i := 0; i < b.N; i++ {
		for p := 0; p < pairs; p++ {
			j := pollFor(b, source{start: 1, format: formatJSON}, n)
			e := pollFor(b, source{start: 1, format: formatEvents, events: g}, n)
			js = append(js, float64(j.Nanoseconds())/n)
			ev = append(ev, float64(e.Nanoseconds())/n)
			ratio = append(ratio, j.Seconds()/e.Seconds())
		}
	}
	b.ReportMetric(median(js), "ns/record(json)")
	b.ReportMetric(median(ev), "ns/record(events)")
	b.ReportMetric(1e9/median(ev), "records/s(events)")
	b.ReportMetric(median(ratio), "events/json-throughput")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
