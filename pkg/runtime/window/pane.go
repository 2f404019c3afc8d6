package window

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// firedList is the operator state of paneOp: the watermark its windows
// fired up to, one item per subtask (Union: after a rescale every subtask
// takes the least, see restoreFired).
const firedList = "firedWatermark"

// lastEndList is the operator state of paneOp: the greatest end of a window
// it fired, one item per subtask (Union; encodeLastEnd). After the input
// ended (stop --drain) the fired watermark is MaxWatermark, which a
// restore cannot keep; the last end fired is what it keeps instead (see
// restoreFired). Snapshots of a flinkgo before it have none.
const lastEndList = "lastFiredWindowEnd"

// paneOp is the window operator of tumbling and sliding windows. Its
// state is laid out pane by pane (state.Sliced), keys within each pane, as
// Flink's slicing window aggregation and Arroyo lay theirs: a record
// updates its key's entry of one pane, and when time passes a window's
// end the window fires for all its keys at once, by walking its panes,
// with no timer per key (docs/window-panes.md).
//
// Event time: the window [s, e) fires when the watermark reaches e-1,
// with its result stamped e-1; with allowedLateness L a pane stays until
// the watermark reaches the end of its last window -1+L, and a late record
// within that time fires the windows it lands in again at once, for its
// key. A record later than that is counted and sent to the side output
// "late".
//
// Processing time: a record goes to the pane of the wall clock, and the
// window [s, e) fires when the clock reaches e, by one processing-time
// timer, under some key, at the first end still to fire (armed): timers
// are the only clock an operator hears.
type paneOp struct {
	cfg   config
	a     Assigner
	ctx   *runtime.Context
	panes *state.Sliced[*accum]
	// fired is the watermark the windows fired up to: windows ending at or
	// before fired+1 have fired. It is the input watermark, or after a
	// restore the watermark of the snapshot while the input's is lower.
	// firedBound: fired is only a lower bound, told by the timers of state
	// restored from the old layout, until the input watermark passes it
	// (see firedMark).
	fired      int64
	firedBound bool
	// lastEnd is the greatest end of a window fired (MinWatermark: none),
	// restored as the greatest of the old subtasks'.
	lastEnd int64
	vals    []any
	rec     runtime.Record // the record being evaluated
	res     results
	late    *atomic.Int64
	open    *atomic.Int64
	keys    *atomic.Int64
	// merged and one hold a sliding window's result while it is emitted:
	// per key (firing), or the current key's (a late record's re-firing);
	// spare keeps merged's accumulators for the next window.
	merged map[string]*accum
	spare  []*accum
	one    *accum
	in     []*state.Slice[*accum] // the panes of the window firing
	pane   paneEnds               // of the last record's pane
	top    *topOf                 // keepMax; nil: every result
	// armed is the time of the processing-time timer pending for the
	// first window end still to fire (armedOK: one is).
	armed   int64
	armedOK bool
}

// paneEnds is a pane's start and its windows' first and last end: records
// mostly fall into the pane of the record before, and finding them takes
// three divisions.
type paneEnds struct {
	start, first, last int64
	ok                 bool
}

func newPaneOp(cfg config) *paneOp {
	return &paneOp{cfg: cfg, a: cfg.assigner, vals: make([]any, cfg.nargs), res: newResults(cfg),
		fired: runtime.MinWatermark, lastEnd: runtime.MinWatermark, merged: map[string]*accum{}, top: newTopOf(cfg.aggs, cfg.keepMax)}
}

var (
	_ runtime.KeyedProcessFunction = (*paneOp)(nil)
	_ runtime.WatermarkListener    = (*paneOp)(nil)
	_ runtime.Snapshotter          = (*paneOp)(nil)
)

func (o *paneOp) Open(ctx *runtime.Context) (err error) {
	o.ctx = ctx
	o.cfg.args = o.cfg.args.Clone()
	o.panes, err = runtime.NewSliced[*accum](ctx, "panes", accCodec{aggs: o.cfg.aggs})
	if err != nil {
		return err
	}
	if o.lastEnd, err = restoreLastEnd(ctx.OperatorState().Get(lastEndList)); err != nil {
		return fmt.Errorf("restore %s: %w", lastEndList, err)
	}
	m, err := restoreFired(ctx.OperatorState().Get(firedList), o.lastEnd)
	if err != nil {
		return fmt.Errorf("restore %s: %w", firedList, err)
	}
	if restoresTimerLayout(ctx) {
		if m.w, err = o.firedOfTimerLayout(); err != nil {
			return fmt.Errorf("restore window panes: %w", err)
		}
		m.bound = true
	}
	o.fired, o.firedBound = m.w, m.bound
	o.armRestored()
	o.late = ctx.Metrics().Counter(metricLateDropped)
	o.open = ctx.Metrics().Gauge(metricOpen)
	o.keys = ctx.Metrics().Gauge(metricKeys)
	o.gauges()
	return nil
}

func (o *paneOp) SnapshotState(int64) error {
	o.ctx.OperatorState().Set(firedList, state.Union, [][]byte{encodeFired(firedMark{w: o.fired, bound: o.firedBound})})
	o.ctx.OperatorState().Set(lastEndList, state.Union, [][]byte{encodeLastEnd(o.lastEnd)})
	return nil
}

func (o *paneOp) Close() error { return nil }

func (o *paneOp) gauges() {
	o.open.Store(int64(o.panes.Len()))
	o.keys.Store(int64(o.panes.NumKeys()))
}

func (o *paneOp) ProcessElement(r runtime.Record, out runtime.Output) error {
	if o.cfg.global {
		o.ctx.SetCurrentKey(nil)
	}
	if o.cfg.nargs > 0 { // see operator.ProcessElement
		o.rec = r
		err := o.cfg.args.Eval(&o.rec, o.vals)
		o.rec = runtime.Record{}
		if err != nil {
			return runtime.BadRecord(err)
		}
	}
	ts := r.Timestamp
	if o.cfg.processing {
		ts = time.Now().UnixMilli()
	}
	if !o.pane.ok || ts < o.pane.start || uint64(ts-o.pane.start) >= uint64(o.a.Pane()) { // exact for any ts >= start
		p := o.a.PaneStart(ts)
		first, last := o.a.WindowEnds(p)
		o.pane = paneEnds{start: p, first: first, last: last, ok: true}
	}
	p, first, last := o.pane.start, o.pane.first, o.pane.last
	if expired(last, o.fired, o.cfg.lateness) {
		o.late.Add(1)
		if out != nil {
			out.EmitTo(lateOutput, r)
		}
		return nil
	}
	acc, ok := o.panes.Get(p)
	if !ok {
		acc = newAcc(o.cfg.aggs)
	}
	if err := acc.Add(o.cfg.aggs, o.vals, ts); err != nil {
		return runtime.BadRecord(err) // before any state changed: the record can be skipped
	}
	if !ok { // an existing pane is updated in place
		o.panes.Put(p, acc)
		o.gauges()
		if o.cfg.processing {
			o.arm(o.firstAfter(first))
		}
	}
	// Windows that fired already but are within their lateness fire
	// again, for this key (see refires); with keepMax too, since the
	// key's new result may be the greatest, and the others' are not at hand.
	for e := first; e <= last && e-1 <= o.fired; e += o.a.Step() {
		if refires(e, o.fired, o.cfg.lateness) {
			o.emitKey(e, out)
		}
	}
	return nil
}

// emitKey emits the current key's result of the window ending at e.
func (o *paneOp) emitKey(e int64, out runtime.Output) {
	from, to := o.a.PanesOf(e)
	if o.one == nil {
		o.one = newAcc(o.cfg.aggs)
	}
	acc := o.one
	acc.reset()
	for _, p := range o.panes.Starts() {
		if p < from || p > to {
			continue
		}
		if pa, ok := o.panes.Get(p); ok {
			acc.Merge(o.cfg.aggs, pa)
		}
	}
	if acc.Records > 0 {
		o.res.emit(o.ctx.CurrentKey(), e-o.a.Size, e, acc, out)
	}
}

// OnTimer fires, in processing time, the windows ending at or before ts
// (the clock reached ts), and arms the timer of the next. Event-time
// timers are those of state restored from the old layout (a timer per
// key), which fire nothing: windows fire by watermark.
func (o *paneOp) OnTimer(ts int64, d runtime.TimeDomain, out runtime.Output) error {
	if !o.cfg.processing || d != runtime.ProcessingTime {
		return nil
	}
	if o.armedOK && ts >= o.armed {
		o.armedOK = false
	}
	o.advance(ts-1, out)
	if e, ok := o.nextEnd(); ok {
		o.arm(e)
	}
	return nil
}

// OnWatermark fires, in event time, the windows the watermark w passed.
func (o *paneOp) OnWatermark(w int64, out runtime.Output) error {
	if !o.cfg.processing {
		o.advance(w, out)
	}
	return nil
}

// arm registers a processing-time timer at e, under the current key,
// unless one is pending at or before it.
func (o *paneOp) arm(e int64) {
	if o.armedOK && o.armed <= e {
		return
	}
	o.ctx.Timers().RegisterProcessingTime(e)
	o.armed, o.armedOK = e, true
}

// armRestored arms, in processing time, the timer of the first restored
// window to fire, under a key of its pane: restored timers of another
// subtask's keys may have gone elsewhere on a rescale.
func (o *paneOp) armRestored() {
	if !o.cfg.processing {
		return
	}
	e, ok := o.nextEnd()
	if !ok {
		return
	}
	o.panes.Slice(o.panes.Starts()[0]).Range(func(key string, _ *accum) bool {
		o.ctx.SetCurrentKey([]byte(key))
		return false
	})
	o.arm(e)
}

// firstAfter is the first end, from first on, of a window that has not
// fired (it may be past the pane's last window).
func (o *paneOp) firstAfter(first int64) int64 {
	if first-1 > o.fired {
		return first
	}
	step := o.a.Step()
	return first + ((o.fired-(first-1))/step+1)*step
}

// nextEnd is the least end of a window that has not fired and holds a pane
// (ok false: none).
func (o *paneOp) nextEnd() (e int64, ok bool) {
	for _, p := range o.panes.Starts() {
		first, last := o.a.WindowEnds(p)
		if f := o.firstAfter(first); f <= last && (!ok || f < e) {
			e, ok = f, true
		}
	}
	return e, ok
}

// advance fires, in order of their ends, the windows that time w (the
// watermark, or the clock less 1) passed and that hold a pane, then drops
// the panes no window needs any more.
func (o *paneOp) advance(w int64, out runtime.Output) {
	if w <= o.fired {
		return
	}
	step := o.a.Step()
	next := int64(math.MinInt64) // the least window end not fired yet in this call
	for i := 0; i < len(o.panes.Starts()); i++ {
		first, last := o.a.WindowEnds(o.panes.Starts()[i])
		e := max(o.firstAfter(first), next)
		for ; e <= last && e-1 <= w; e += step {
			o.fire(e, out)
		}
		next = e
	}
	o.fired, o.firedBound = w, false
	starts := o.panes.Starts()
	for len(starts) > 0 {
		if _, last := o.a.WindowEnds(starts[0]); !expired(last, w, o.cfg.lateness) {
			break
		}
		o.panes.Drop(starts[0])
		starts = o.panes.Starts()
	}
	o.gauges()
}

// fire emits the result of the window ending at e for each key with a
// record in it.
func (o *paneOp) fire(e int64, out runtime.Output) {
	o.lastEnd = max(o.lastEnd, e)
	from, to := o.a.PanesOf(e)
	in := o.in[:0]
	for _, p := range o.panes.Starts() {
		if p >= from && p <= to {
			in = append(in, o.panes.Slice(p))
		}
	}
	clear(in[len(in):cap(in)]) // no pane kept past its window
	o.in = in
	start := e - o.a.Size
	if len(in) == 1 { // a tumbling window, or a sliding one with one pane
		if o.top != nil {
			o.top.reset()
			in[0].Range(func(_ string, acc *accum) bool {
				if acc.Records > 0 {
					o.top.see(acc)
				}
				return true
			})
		}
		in[0].Range(func(key string, acc *accum) bool {
			if acc.Records > 0 && o.top.keeps(acc) {
				o.res.emit(resultKey(key), start, e, acc, out)
			}
			return true
		})
		return
	}
	for _, sl := range in {
		sl.Range(func(key string, acc *accum) bool {
			m := o.merged[key] // the pane's own string: no copy of the key
			if m == nil {
				if n := len(o.spare); n > 0 {
					m, o.spare = o.spare[n-1], o.spare[:n-1]
					m.reset()
				} else {
					m = newAcc(o.cfg.aggs)
				}
				o.merged[key] = m
			}
			m.Merge(o.cfg.aggs, acc)
			return true
		})
	}
	if o.top != nil {
		o.top.reset()
		for _, m := range o.merged {
			if m.Records > 0 {
				o.top.see(m)
			}
		}
	}
	for k, m := range o.merged {
		if m.Records > 0 && o.top.keeps(m) {
			o.res.emit(resultKey(k), start, e, m, out)
		}
		o.spare = append(o.spare, m)
	}
	clear(o.merged)
}

// resultKey is the bytes of a pane's key for a result (emit copies them):
// nil for the empty key of a global window, as the current key of one is.
func resultKey(key string) []byte {
	if len(key) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(key), len(key))
}

// newFunction is the window's function: operator for sessions, paneOp
// for tumbling and sliding windows, in event or processing time.
func newFunction(cfg config) runtime.KeyedProcessFunction {
	if cfg.assigner.Kind == Session {
		return newOperator(cfg)
	}
	return newPaneOp(cfg)
}
