package runtime

import (
	"sync"
	"sync/atomic"
)

// Metrics are an operator's own figures (pending acks, skipped records),
// shown by `flinkgo info`, the dashboard and /metrics. The operator updates
// them on its goroutine; the daemon reads them from others. A gauge is a
// current value; a counter only grows and, unlike a gauge, keeps its total
// across the job's restarts.
type Metrics struct {
	mu       sync.Mutex
	m        map[string]*atomic.Int64
	counters map[string]bool
	problems map[string]string // see SetProblem
	texts    map[string]string // see SetText
}

// SetText sets a named text figure of the subtask (a transactional id,
// say): shown by info for the running attempt, per subtask.
func (g *Metrics) SetText(name, value string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.texts == nil {
		g.texts = map[string]string{}
	}
	g.texts[name] = value
}

// Texts returns a copy of the text figures.
func (g *Metrics) Texts() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]string, len(g.texts))
	for k, v := range g.texts {
		out[k] = v
	}
	return out
}

// Gauge returns the named gauge, creating it. Keep the pointer: looking it
// up per record costs a lock.
func (g *Metrics) Gauge(name string) *atomic.Int64 { return g.get(name, false) }

// Counter returns the named counter, creating it.
func (g *Metrics) Counter(name string) *atomic.Int64 { return g.get(name, true) }

func (g *Metrics) get(name string, counter bool) *atomic.Int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]*atomic.Int64{}
		g.counters = map[string]bool{}
	}
	v := g.m[name]
	if v == nil {
		v = new(atomic.Int64)
		g.m[name] = v
	}
	if counter {
		g.counters[name] = true
	}
	return v
}

// Snapshot returns the current values by name, and which are counters.
func (g *Metrics) Snapshot() (values map[string]int64, counters map[string]bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	values = make(map[string]int64, len(g.m))
	counters = make(map[string]bool, len(g.counters))
	for k, v := range g.m {
		values[k] = v.Load()
	}
	for k := range g.counters {
		counters[k] = true
	}
	return values, counters
}
