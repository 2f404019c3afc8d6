package join

import (
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/window"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// windowJoin is one subtask of a window join. Tumbling and sliding windows
// keep each side's rows by pane (a tumbling window is one pane; a sliding
// window of size S and slide L is S/gcd(S, L) panes), so a row is stored
// once whatever S/L is; the window [e-S, e) of a key fires when the
// watermark reaches e-1: the rows of its panes are matched, the results
// stamped e-1, and the panes no later window needs are dropped. Session
// windows are computed over both sides' rows of a key together (a row of
// either side extends or bridges the key's sessions, as Flink's session
// window join does); a session's rows are kept under its start.
//
// A row whose every window already fired is late: counted and sent to its
// side output. There is no allowed lateness: a window's outer results
// cannot be taken back once emitted.
type windowJoin struct {
	base
	a        window.Assigner
	sessions *state.Map[int64, int64] // session start -> end
	lefts    []*row
	rights   []*row
	matched  []bool
	sessBuf  []window.SessionWindow
	sessKeys []int64
}

var (
	_ runtime.KeyedCoProcessFunction = (*windowJoin)(nil)
	_ runtime.StateDescriber         = (*windowJoin)(nil)
)

func newWindowJoin(cfg config, a window.Assigner) *windowJoin {
	return &windowJoin{base: base{cfg: cfg}, a: a}
}

func (o *windowJoin) Open(ctx *runtime.Context) (err error) {
	if err := o.open(ctx); err != nil {
		return err
	}
	if o.a.Kind == window.Session {
		o.sessions, err = runtime.NewMap[int64, int64](ctx, "sessions", state.Int64Codec{}, state.Int64Codec{})
	}
	return err
}

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
	if created := o.store(s, p, newRow(r)); !created {
		return nil
	}
	if _, other := o.sides[1-s].Get(p); other {
		return nil // the pane's windows are scheduled already
	}
	for e := first; e <= last; e += o.a.Step() {
		if e-1 > wm {
			o.timers.RegisterEventTime(e - 1)
		}
	}
	return nil
}

func (o *windowJoin) OnTimer(ts int64, _ runtime.TimeDomain, out runtime.Output) error {
	e := ts + 1
	if o.a.Kind == window.Session {
		return o.fireSession(e, out)
	}
	from, to := o.a.PanesOf(e)
	o.lefts, o.rights = o.gather(left, from, to, o.lefts[:0]), o.gather(right, from, to, o.rights[:0])
	if err := o.join(e-o.a.Size, e, out); err != nil {
		return err
	}
	from, to = o.a.PanesEndingAt(e)
	for p := from; p <= to; p += o.a.Pane() {
		o.remove(left, p)
		o.remove(right, p)
	}
	return nil
}

// gather appends the rows of side s in the panes from..to of the current key.
func (o *windowJoin) gather(s int, from, to int64, dst []*row) []*row {
	for p := from; p <= to; p += o.a.Pane() {
		dst = o.gatherSlot(s, p, dst)
	}
	return dst
}

// gatherSlot appends the rows of side s at slot of the current key.
func (o *windowJoin) gatherSlot(s int, slot int64, dst []*row) []*row {
	if rs, ok := o.sides[s].Get(slot); ok {
		for i := range rs.list {
			dst = append(dst, &rs.list[i])
		}
	}
	return dst
}

// join matches the gathered rows of window [start, end) and emits the
// results (and, for outer joins, the unmatched rows of the kept sides),
// stamped end-1.
func (o *windowJoin) join(start, end int64, out runtime.Output) error {
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
		for j, r := range o.rights {
			ok, err := o.em.emit(l, r, ts, out)
			if err != nil {
				return err
			}
			if ok {
				found, o.matched[j] = true, true
			}
		}
		if !found && o.cfg.how.keepsLeft() {
			if _, err := o.em.emit(l, nil, ts, out); err != nil {
				return err
			}
		}
	}
	if o.cfg.how.keepsRight() {
		for j, r := range o.rights {
			if !o.matched[j] {
				if _, err := o.em.emit(nil, r, ts, out); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (o *windowJoin) addToSession(s int, r runtime.Record, wm int64, out runtime.Output) error {
	w := window.SessionWindow{Start: r.Timestamp, End: r.Timestamp + o.a.Gap}
	o.sessBuf, o.sessKeys = o.sessBuf[:0], o.sessKeys[:0]
	o.sessions.Range(func(start, end int64) bool {
		o.sessBuf = append(o.sessBuf, window.SessionWindow{Start: start, End: end})
		o.sessKeys = append(o.sessKeys, start)
		return true
	})
	merged, absorbed := window.MergeSessions(o.sessBuf, w)
	if merged.End-1 <= wm {
		o.dropLate(s, r, out)
		return nil
	}
	for _, i := range absorbed {
		old := o.sessBuf[i]
		o.timers.DeleteEventTime(old.End - 1)
		if old.Start == merged.Start {
			continue
		}
		o.move(left, old.Start, merged.Start)
		o.move(right, old.Start, merged.Start)
		o.sessions.Remove(old.Start)
	}
	o.store(s, merged.Start, newRow(r))
	o.sessions.Put(merged.Start, merged.End)
	o.timers.RegisterEventTime(merged.End - 1)
	return nil
}

// move appends the rows of side s at slot from to those at slot to.
func (o *windowJoin) move(s int, from, to int64) {
	rs, ok := o.sides[s].Get(from)
	if !ok {
		return
	}
	dst, ok := o.sides[s].Get(to)
	if !ok {
		dst = &rows{}
		o.sides[s].Put(to, dst)
	}
	dst.list = append(dst.list, rs.list...)
	o.sides[s].Remove(from)
}

// fireSession joins the current key's session that ends at e.
func (o *windowJoin) fireSession(e int64, out runtime.Output) error {
	start, found := int64(0), false
	o.sessions.Range(func(s, end int64) bool {
		if end == e {
			start, found = s, true
			return false
		}
		return true
	})
	if !found {
		return nil
	}
	o.lefts, o.rights = o.gatherSlot(left, start, o.lefts[:0]), o.gatherSlot(right, start, o.rights[:0])
	if err := o.join(start, e, out); err != nil {
		return err
	}
	o.remove(left, start)
	o.remove(right, start)
	o.sessions.Remove(start)
	return nil
}
