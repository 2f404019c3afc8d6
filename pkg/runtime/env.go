package runtime

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/flinkgo/flinkgo/internal/vfs"
)

// Env is what the daemon lends to a job's operators.
type Env struct {
	// FS is the filesystem for state and sinks (vfs.Default in production).
	FS vfs.FS
	// Stdout receives print sink lines (the daemon's stdout); may be nil.
	Stdout io.Writer
	// OutFile receives print sink lines too (the job's .out file); may be nil.
	OutFile io.Writer
	// Faults is the test hook for injecting failures; nil in production.
	Faults FaultHook
}

// FaultHook lets tests make named points in operators and the runtime fail.
// Fire returns an error to fail the operation at point, or nil; it may also
// panic or exit the process. Production code passes nil (Env.Fire is then a
// no-op).
type FaultHook interface {
	Fire(point string, attrs ...any) error
}

// Fire consults the fault hook, if any.
func (e *Env) Fire(point string, attrs ...any) error {
	if e == nil || e.Faults == nil {
		return nil
	}
	return e.Faults.Fire(point, attrs...)
}

// Gauges are an operator's own figures (pending acks, skipped records),
// readable from other goroutines (info, metrics). A gauge (Get) is a
// current value; a counter (Counter) only grows and, unlike a gauge, keeps
// its total across the job's restarts.
type Gauges struct {
	mu       sync.Mutex
	m        map[string]*atomic.Int64
	counters map[string]bool
	texts    map[string]string
}

// SetText sets a named text figure of the subtask (a transactional id,
// say): shown by info for the running attempt, per subtask.
func (g *Gauges) SetText(name, value string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.texts == nil {
		g.texts = map[string]string{}
	}
	g.texts[name] = value
}

// Texts returns a copy of the text figures.
func (g *Gauges) Texts() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]string, len(g.texts))
	for k, v := range g.texts {
		out[k] = v
	}
	return out
}

// Get returns the named gauge, creating it.
func (g *Gauges) Get(name string) *atomic.Int64 { return g.get(name, false) }

// Counter returns the named counter, creating it.
func (g *Gauges) Counter(name string) *atomic.Int64 { return g.get(name, true) }

func (g *Gauges) get(name string, counter bool) *atomic.Int64 {
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
func (g *Gauges) Snapshot() (values map[string]int64, counters map[string]bool) {
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
