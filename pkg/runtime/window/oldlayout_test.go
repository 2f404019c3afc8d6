package window

import (
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// timerOp is the old layout of event-time tumbling and sliding windows
// (flinkgo before the panes, docs/window-panes.md), kept as a test model
// only: per key, its panes in a Map and a timer for its next window. It
// writes the snapshots paneOp converts at restore, and is the reference
// paneOp is run against (TestPaneOpMatchesOperator).
type timerOp struct {
	cfg    config
	a      Assigner
	ctx    *runtime.Context
	timers runtime.Timers
	panes  *state.Map[int64, *accum]
	vals   []any
	late   *atomic.Int64
	open   *atomic.Int64
	openN  int64
	keys   *atomic.Int64
	keysN  int64
	res    results
}

func newTimerOp(cfg config) *timerOp {
	return &timerOp{cfg: cfg, a: cfg.assigner, vals: make([]any, cfg.nargs), res: newResults(cfg)}
}

func (o *timerOp) Open(ctx *runtime.Context) (err error) {
	o.ctx, o.timers = ctx, ctx.Timers()
	o.panes, err = runtime.NewMap[int64, *accum](ctx, "panes", state.Int64Codec{}, accCodec{aggs: o.cfg.aggs})
	if err != nil {
		return err
	}
	o.openN = int64(o.panes.TotalLen())
	o.open = ctx.Metrics().Gauge(metricOpen)
	o.open.Store(o.openN)
	o.late = ctx.Metrics().Counter(metricLateDropped)
	o.keys = ctx.Metrics().Gauge(metricKeys)
	o.keysN = int64(o.panes.NumKeys())
	o.keys.Store(o.keysN)
	return nil
}

func (o *timerOp) Close() error { return nil }

func (o *timerOp) ProcessElement(r runtime.Record, out runtime.Output) error {
	if o.cfg.global {
		o.ctx.SetCurrentKey(nil)
	}
	return o.addToPane(r, r.Timestamp, out)
}

func (o *timerOp) watermark() int64       { return o.ctx.CurrentWatermark() }
func (o *timerOp) fireAt(end int64) int64 { return end - 1 }
func (o *timerOp) endOf(ts int64) int64   { return ts + 1 }
func (o *timerOp) register(ts int64)      { o.timers.RegisterEventTime(ts) }
func (o *timerOp) emit(start, end int64, acc *accum, out runtime.Output) {
	o.res.emit(o.ctx.CurrentKey(), start, end, acc, out)
}

func (o *timerOp) addToPane(r runtime.Record, ts int64, out runtime.Output) error {
	wm := o.watermark()
	p := o.a.PaneStart(ts)
	first, last := o.a.WindowEnds(p)
	if expired(last, wm, o.cfg.lateness) {
		o.dropLate(r, out)
		return nil
	}
	acc, ok := o.panes.Get(p)
	if !ok {
		acc = newAcc(o.cfg.aggs)
	}
	if err := acc.Add(o.cfg.aggs, o.vals, ts); err != nil {
		return runtime.BadRecord(err) // before any state changed: the record can be skipped
	}
	if !ok {
		o.panes.Put(p, acc) // an existing pane is updated in place
	}
	if !ok {
		o.open.Store(o.openDelta(1))
		if o.panes.Len() == 1 {
			o.keysDelta(1)
		}
		// One timer: the pane's first window still to fire. Each firing
		// schedules the next window of the key (see OnTimer), so a pane
		// costs one timer whatever size/slide is.
		for e := first; e <= last; e += o.a.Step() {
			if e-1 > wm {
				o.register(o.fireAt(e))
				break
			}
		}
		if o.cfg.lateness > 0 {
			o.register(last - 1 + o.cfg.lateness)
		}
	}
	// Windows that fired already but are within the lateness fire again.
	for e := first; e <= last; e += o.a.Step() {
		if refires(e, wm, o.cfg.lateness) {
			o.emitWindow(e, out)
		}
	}
	return nil
}

// openDelta counts panes or sessions created (+) or dropped (-).
func (o *timerOp) openDelta(d int64) int64 {
	o.openN += d
	return o.openN
}

// emitWindow emits the result of the window ending at e of the current key,
// if it holds any record, and reports whether the key's next window (ending
// a step later) holds a pane.
func (o *timerOp) emitWindow(e int64, out runtime.Output) (next bool) {
	from, to := o.a.PanesOf(e)
	nextFrom, nextTo := from+o.a.Step(), to+o.a.Step()
	var acc *accum
	switch {
	case o.a.Kind == Tumbling:
		acc, _ = o.panes.Get(from)
		_, next = o.panes.Get(nextFrom)
	default:
		o.panes.Range(func(p int64, pa *accum) bool {
			if p >= from && p <= to {
				if acc == nil {
					acc = newAcc(o.cfg.aggs)
				}
				acc.Merge(o.cfg.aggs, pa)
			}
			next = next || (p >= nextFrom && p <= nextTo)
			return true
		})
	}
	if acc != nil && acc.Records > 0 {
		o.emit(e-o.a.Size, e, acc, out)
	}
	return next
}

// keysDelta counts a key that got its first pane or session (+1) or lost
// its last (-1): counting the keys of every key group per change cost a
// pass over the groups per key.
func (o *timerOp) keysDelta(d int64) {
	o.keysN += d
	o.keys.Store(o.keysN)
}

// dropLate counts a record too late for every window it belongs to and
// sends it to the side output.
func (o *timerOp) dropLate(r runtime.Record, out runtime.Output) {
	o.late.Add(1)
	if out != nil {
		out.EmitTo(lateOutput, r)
	}
}

func (o *timerOp) OnTimer(ts int64, _ runtime.TimeDomain, out runtime.Output) error {
	e := o.endOf(ts)
	if o.a.IsWindowEnd(e) {
		if next := o.emitWindow(e, out); next {
			o.register(o.fireAt(e + o.a.Step()))
		}
	}
	// Drop the panes whose last window ended (lateness ago): those whose
	// last window ends at e - lateness.
	if end := e - o.cfg.lateness; o.a.IsWindowEnd(end) {
		from, to := o.a.PanesEndingAt(end)
		dropped := false
		for p := from; p <= to; p += o.a.Pane() {
			if _, ok := o.panes.Get(p); ok {
				o.panes.Remove(p)
				o.open.Store(o.openDelta(-1))
				dropped = true
			}
		}
		if dropped && o.panes.Len() == 0 {
			o.keysDelta(-1)
		}
	}
	return nil
}
