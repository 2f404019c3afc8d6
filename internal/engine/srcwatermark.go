package engine

import "github.com/flinkgo/flinkgo/pkg/runtime"

// SourceWatermarks generates a source subtask's watermark from the event
// timestamps of its splits (Flink's per-split bounded-out-of-orderness
// strategy with idleness). Pure: times come in as Unix milliseconds.
//
// A split's watermark is its largest timestamp minus the bound, minus 1. A
// split seen no record yet holds the subtask back at MinWatermark until it
// is idle; a split quiet for the idle timeout stops holding it back until
// it produces again; a split that ended drops out. The subtask's watermark
// is the minimum over its active splits and never goes back. With every
// split idle the subtask is idle, or, with advanceWhenIdle, its watermark
// follows the wall clock minus the bound.
type SourceWatermarks struct {
	bound, idleAfter int64 // ms; idleAfter 0: never idle
	advanceWhenIdle  bool
	splits           map[uint32]*splitMark
	current          int64
	// The split Observe saw last (nil after SetSplits): a source reads
	// runs of records of one split, and the map lookup was most of Observe.
	lastID   uint32
	lastMark *splitMark
}

type splitMark struct {
	max  int64 // largest timestamp seen; MinWatermark before the first
	last int64 // wall clock of the last record (or of its assignment)
}

// NewSourceWatermarks returns a generator with the given out-of-orderness
// bound and idle timeout (ms), and no split.
func NewSourceWatermarks(bound, idleAfter int64, advanceWhenIdle bool) *SourceWatermarks {
	return &SourceWatermarks{bound: bound, idleAfter: idleAfter, advanceWhenIdle: advanceWhenIdle,
		splits: map[uint32]*splitMark{}, current: runtime.MinWatermark}
}

// SetSplits makes ids the splits read now: new ones start (their idle clock
// at now), missing ones ended.
func (g *SourceWatermarks) SetSplits(ids []uint32, now int64) {
	g.lastMark = nil
	keep := make(map[uint32]bool, len(ids))
	for _, id := range ids {
		keep[id] = true
		if g.splits[id] == nil {
			g.splits[id] = &splitMark{max: runtime.MinWatermark, last: now}
		}
	}
	for id := range g.splits {
		if !keep[id] {
			delete(g.splits, id)
		}
	}
}

// Observe records a record of split at event time ts. A split not set yet
// is added.
func (g *SourceWatermarks) Observe(split uint32, ts, now int64) {
	s := g.lastMark
	if s == nil || g.lastID != split {
		if s = g.splits[split]; s == nil {
			s = &splitMark{max: runtime.MinWatermark}
			g.splits[split] = s
		}
		g.lastID, g.lastMark = split, s
	}
	if ts > s.max {
		s.max = ts
	}
	s.last = now
}

// Watermark returns the subtask's watermark at now and whether it is idle
// (every split idle, none ended... and no clock advance). With no split at
// all (every one ended) it is MaxWatermark.
func (g *SourceWatermarks) Watermark(now int64) (wm int64, idle bool) {
	if len(g.splits) == 0 {
		g.current = runtime.MaxWatermark
		return g.current, false
	}
	min, active := runtime.MaxWatermark, false
	for _, s := range g.splits {
		if g.idleAfter > 0 && now-s.last >= g.idleAfter {
			continue
		}
		active = true
		w := runtime.MinWatermark
		if s.max != runtime.MinWatermark {
			w = sat(s.max - g.bound - 1)
		}
		if w < min {
			min = w
		}
	}
	if !active {
		if !g.advanceWhenIdle {
			return g.current, true
		}
		min = now - g.bound - 1
	}
	if min > g.current {
		g.current = min
	}
	return g.current, false
}

// Raise makes the watermark at least w from now on (a watermark the
// source declared; DeclaredWatermarks).
func (g *SourceWatermarks) Raise(w int64) {
	if w > g.current {
		g.current = w
	}
}

// IdleSplits counts the splits idle at now.
func (g *SourceWatermarks) IdleSplits(now int64) int {
	n := 0
	for _, s := range g.splits {
		if g.idleAfter > 0 && now-s.last >= g.idleAfter {
			n++
		}
	}
	return n
}

// sat keeps a watermark computed near MinWatermark from wrapping.
func sat(w int64) int64 {
	if w > runtime.MaxWatermark-1 {
		return runtime.MaxWatermark - 1
	}
	return w
}
