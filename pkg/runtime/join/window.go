package join

import (
	"sort"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/window"
)

// windowJoin is one subtask of a window join. Tumbling and sliding windows
// keep each side's rows by pane (a tumbling window is one pane; a sliding
// window of size S and slide L is S/gcd(S, L) panes), so a row is stored
// once whatever S/L is; the window [e-S, e) of a key fires when the
// watermark reaches e-1: the rows of its panes are matched, the results
// stamped e-1, and the panes no later window needs are dropped. A key has
// one timer, at its next window end: each firing schedules the next.
// Session windows are computed over both sides' rows of a key together (a
// row of either side extends or bridges the key's sessions, as Flink's
// session window join does); a session's rows are kept under its start,
// and the key's timer is at its earliest session end.
//
// A row whose every window already fired is late: counted and sent to its
// side output. There is no allowed lateness: a window's outer results
// cannot be taken back once emitted.
type windowJoin struct {
	base
	a       window.Assigner
	lefts   []*row
	rights  []*row
	matched []bool
	sessBuf []window.SessionWindow
}

var (
	_ runtime.KeyedCoProcessFunction = (*windowJoin)(nil)
	_ runtime.StateDescriber         = (*windowJoin)(nil)
)

func newWindowJoin(cfg config, a window.Assigner) *windowJoin {
	return &windowJoin{base: base{cfg: cfg}, a: a}
}

func (o *windowJoin) Open(ctx *runtime.Context) error { return o.open(ctx) }

func (o *windowJoin) ProcessElement1(r runtime.Record, out runtime.Output) error {
	return o.add(left, r, out)
}

func (o *windowJoin) ProcessElement2(r runtime.Record, out runtime.Output) error {
	return o.add(right, r, out)
}

func (o *windowJoin) add(s int, r runtime.Record, out runtime.Output) error {
	wm := o.ctx.CurrentWatermark()
	if o.a.Kind == window.Session {
		return o.addToSession(s, r, wm, out)
	}
	p := o.a.PaneStart(r.Timestamp)
	first, last := o.a.WindowEnds(p)
	if last-1 <= wm {
		o.dropLate(s, r, out)
		return nil
	}
	k := o.current()
	rw, v := o.newRow(s, p, r)
	o.store(k, s, rw, v)
	e := first
	for e-1 <= wm { // windows of the pane that fired already
		e += o.a.Step()
	}
	if k.timers[0] == runtime.MinWatermark || e-1 < k.timers[0] {
		o.schedule(k, 0, e-1)
	}
	return nil
}

func (o *windowJoin) OnTimer(ts int64, _ runtime.TimeDomain, out runtime.Output) error {
	k, ok := o.keys.Get()
	if !ok || k.timers[0] != ts {
		return nil // not the key's timer (none is left behind; a guard)
	}
	k.timers[0] = runtime.MinWatermark // it fired
	e := ts + 1
	if o.a.Kind == window.Session {
		return o.fireSession(k, e, out)
	}
	from, to := o.a.PanesOf(e)
	o.gather(k, from, to)
	if err := o.join(k, e-o.a.Size, e, out); err != nil {
		return err
	}
	// Drop the panes whose last window was this one (rows are by pane).
	for s := range k.sides {
		n := 0
		for n < len(k.sides[s]) {
			if _, last := o.a.WindowEnds(k.sides[s][n].slot); last > e {
				break
			}
			n++
		}
		o.cut(k, s, 0, n)
	}
	next := runtime.MinWatermark
	if p, ok := k.firstSlot(); ok {
		first, _ := o.a.WindowEnds(p)
		next = max(first, e+o.a.Step()) - 1
	}
	o.schedule(k, 0, next)
	return nil
}

// firstSlot is the smallest slot of either side.
func (k *keyState) firstSlot() (int64, bool) {
	l, r := k.sides[left], k.sides[right]
	switch {
	case len(l) > 0 && len(r) > 0:
		return min(l[0].slot, r[0].slot), true
	case len(l) > 0:
		return l[0].slot, true
	case len(r) > 0:
		return r[0].slot, true
	}
	return 0, false
}

// gather points lefts and rights at the rows of slots from..to.
func (o *windowJoin) gather(k *keyState, from, to int64) {
	o.lefts, o.rights = o.lefts[:0], o.rights[:0]
	lo, hi := k.between(left, from, to)
	for i := lo; i < hi; i++ {
		o.lefts = append(o.lefts, &k.sides[left][i])
	}
	lo, hi = k.between(right, from, to)
	for i := lo; i < hi; i++ {
		o.rights = append(o.rights, &k.sides[right][i])
	}
}

// join matches the gathered rows of window [start, end) and emits the
// results (and, for outer joins, the unmatched rows of the kept sides),
// stamped end-1.
func (o *windowJoin) join(k *keyState, start, end int64, out runtime.Output) error {
	if len(o.lefts) == 0 && len(o.rights) == 0 {
		return nil
	}
	if o.cfg.exprs.Uses("windowStart") || o.cfg.exprs.Uses("windowEnd") {
		o.cfg.exprs.Bind("windowStart", start)
		o.cfg.exprs.Bind("windowEnd", end)
	}
	ts := end - 1
	o.matched = append(o.matched[:0], make([]bool, len(o.rights))...)
	for _, l := range o.lefts {
		found := false
		lv := k.value(left, l)
		for j, r := range o.rights {
			ok, err := o.em.emit(lv, k.value(right, r), true, ts, out)
			if err != nil {
				return err
			}
			if ok {
				found, o.matched[j] = true, true
			}
		}
		if !found && o.cfg.how.keepsLeft() {
			if _, err := o.em.emit(lv, nil, false, ts, out); err != nil {
				return err
			}
		}
	}
	if o.cfg.how.keepsRight() {
		for j, r := range o.rights {
			if !o.matched[j] {
				if _, err := o.em.emit(nil, k.value(right, r), false, ts, out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (o *windowJoin) addToSession(s int, r runtime.Record, wm int64, out runtime.Output) error {
	k, ok := o.keys.Get()
	o.sessBuf = o.sessBuf[:0]
	if ok {
		for _, w := range k.sessions {
			o.sessBuf = append(o.sessBuf, window.SessionWindow{Start: w.start, End: w.end})
		}
	}
	merged, absorbed := window.MergeSessions(o.sessBuf, window.SessionWindow{Start: r.Timestamp, End: r.Timestamp + o.a.Gap})
	if merged.End-1 <= wm {
		o.dropLate(s, r, out)
		return nil
	}
	if !ok {
		k = o.current()
	}
	if len(absorbed) > 0 {
		o.mergeSessions(k, absorbed, merged)
	}
	k.sessions = append(k.sessions, session{merged.Start, merged.End})
	sort.Slice(k.sessions, func(i, j int) bool { return k.sessions[i].start < k.sessions[j].start })
	rw, v := o.newRow(s, merged.Start, r)
	o.store(k, s, rw, v)
	o.schedule(k, 0, k.firstEnd()-1)
	return nil
}

// mergeSessions moves the rows of the absorbed sessions to merged's start
// and drops those sessions.
func (o *windowJoin) mergeSessions(k *keyState, absorbed []int, merged window.SessionWindow) {
	gone := map[int64]bool{}
	for _, i := range absorbed {
		gone[o.sessBuf[i].Start] = true
	}
	for s := range k.sides {
		moved := false
		for i := range k.sides[s] {
			if r := &k.sides[s][i]; gone[r.slot] && r.slot != merged.Start {
				r.slot, moved = merged.Start, true
			}
		}
		if moved {
			rs := k.sides[s]
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].slot < rs[j].slot })
		}
	}
	kept := k.sessions[:0]
	for _, w := range k.sessions {
		if !gone[w.start] {
			kept = append(kept, w)
		}
	}
	k.sessions = kept
}

// firstEnd is the earliest end of the key's sessions (MinWatermark+1:
// none).
func (k *keyState) firstEnd() int64 {
	if len(k.sessions) == 0 {
		return runtime.MinWatermark + 1
	}
	e := k.sessions[0].end
	for _, w := range k.sessions[1:] {
		e = min(e, w.end)
	}
	return e
}

// fireSession joins the key's session that ends at e.
func (o *windowJoin) fireSession(k *keyState, e int64, out runtime.Output) error {
	for i, w := range k.sessions {
		if w.end != e {
			continue
		}
		o.gather(k, w.start, w.start)
		if err := o.join(k, w.start, w.end, out); err != nil {
			return err
		}
		for s := range k.sides {
			lo, hi := k.between(s, w.start, w.start)
			o.cut(k, s, lo, hi)
		}
		k.sessions = append(k.sessions[:i], k.sessions[i+1:]...)
		break
	}
	o.schedule(k, 0, k.firstEnd()-1)
	return nil
}
