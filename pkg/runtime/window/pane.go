package window

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// firedList is the operator state of paneOp: the watermark its windows
// fired up to, one item per subtask (Union: after a rescale every subtask
// takes the least, see restoreFired).
const firedList = "firedWatermark"

// paneOp is the window operator of event-time tumbling and sliding
// windows. Its state is laid out pane by pane (state.Sliced), keys within
// each pane, as Flink's slicing window aggregation and Arroyo lay theirs:
// a record updates its key's entry of one pane, and when the watermark
// passes a window's end the window fires for all its keys at once, by
// walking its panes, with no timer per key (docs/window-panes.md).
//
// Its results, lateness and side output are those of operator (see
// there): the window [s, e) fires when the watermark reaches e-1; with
// allowedLateness L a pane stays until the watermark reaches the end of
// its last window -1+L, and a late record within that time fires the
// windows it lands in again at once, for its key.
type paneOp struct {
	cfg   config
	a     Assigner
	ctx   *runtime.Context
	panes *state.Sliced[*Acc]
	// fired is the watermark the windows fired up to: windows ending at or
	// before fired+1 have fired. It is the input watermark, or after a
	// restore the watermark of the snapshot while the input's is lower.
	fired int64
	vals  []any
	rec   runtime.Record // the record being evaluated
	res   results
	late  *atomic.Int64
	open  *atomic.Int64
	keys  *atomic.Int64
	// merged and one hold a sliding window's result while it is emitted:
	// per key (firing), or the current key's (a late record's re-firing);
	// spare keeps merged's accumulators for the next window.
	merged map[string]*Acc
	spare  []*Acc
	one    *Acc
	in     []*state.Slice[*Acc] // the panes of the window firing
	pane   paneEnds             // of the last record's pane
	top    *topOf               // keepMax; nil: every result
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
		fired: runtime.MinWatermark, merged: map[string]*Acc{}, top: newTopOf(cfg.aggs, cfg.keepMax)}
}

var (
	_ runtime.KeyedProcessFunction = (*paneOp)(nil)
	_ runtime.WatermarkListener    = (*paneOp)(nil)
	_ runtime.Snapshotter          = (*paneOp)(nil)
)

func (o *paneOp) Open(ctx *runtime.Context) (err error) {
	o.ctx = ctx
	o.cfg.args = o.cfg.args.Clone()
	o.panes, err = runtime.NewSliced[*Acc](ctx, "panes", accCodec{aggs: o.cfg.aggs})
	if err != nil {
		return err
	}
	o.fired, err = restoreFired(ctx.OperatorState().Get(firedList))
	if err != nil {
		return fmt.Errorf("restore %s: %w", firedList, err)
	}
	o.late = ctx.Metrics().Counter(MetricLateDropped)
	o.open = ctx.Metrics().Gauge(MetricOpen)
	o.keys = ctx.Metrics().Gauge(MetricKeys)
	o.gauges()
	return nil
}

// restoreFired is the watermark restored subtasks fired their windows up
// to: the least of the old subtasks' (MinWatermark when none). In an
// exactly-once checkpoint every subtask of the window took its snapshot
// at the same input watermark, so the least is each one's; otherwise the
// least fires some windows again rather than lose a record as late.
func restoreFired(items [][]byte) (int64, error) {
	if len(items) == 0 {
		return runtime.MinWatermark, nil
	}
	least := int64(math.MaxInt64)
	for _, it := range items {
		w, err := decodeFired(it)
		if err != nil {
			return 0, err
		}
		least = min(least, w)
	}
	if least == runtime.MaxWatermark {
		// Every input had ended (stop --drain, a bounded input): every
		// window fired and every pane went. The restored job starts anew,
		// as operator and Flink do (neither restores the watermark),
		// instead of judging every new record late.
		return runtime.MinWatermark, nil
	}
	return least, nil
}

// firedVersion is the format version of a fired watermark item.
const firedVersion = 1

func encodeFired(w int64) []byte {
	e := state.NewEncoder(firedVersion)
	e.Varint(w)
	return e.Encoded()
}

// decodeFired reads a fired watermark item: encodeFired's, or the bare
// varint written before it had a version. Either is told apart by its
// shape: an old item is exactly one varint, while a new one's version
// byte (below 0x80) is a varint of one byte followed by more.
func decodeFired(b []byte) (int64, error) {
	if w, n := binary.Varint(b); n > 0 && n == len(b) {
		return w, nil
	}
	d := state.NewDecoder("window fired watermark", b, firedVersion)
	w := d.Varint()
	return w, d.Finish()
}

func (o *paneOp) SnapshotState(int64) error {
	o.ctx.OperatorState().Set(firedList, state.Union, [][]byte{encodeFired(o.fired)})
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
	if !o.pane.ok || ts < o.pane.start || uint64(ts-o.pane.start) >= uint64(o.a.Pane()) { // exact for any ts >= start
		p := o.a.PaneStart(ts)
		first, last := o.a.WindowEnds(p)
		o.pane = paneEnds{start: p, first: first, last: last, ok: true}
	}
	p, first, last := o.pane.start, o.pane.first, o.pane.last
	if expired(last, o.fired, o.cfg.lateness) {
		o.late.Add(1)
		if out != nil {
			out.EmitTo(LateOutput, r)
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

// OnTimer ignores timers: windows fire by watermark. The only timers are
// those of state restored from operator, which registered one per key
// (see chooser: such state stays with operator).
func (o *paneOp) OnTimer(int64, runtime.TimeDomain, runtime.Output) error { return nil }

// OnWatermark fires, in order of their ends, the windows the watermark w
// passed that hold a pane, then drops the panes no window needs any more.
func (o *paneOp) OnWatermark(w int64, out runtime.Output) error {
	if w <= o.fired {
		return nil
	}
	step := o.a.Step()
	next := int64(math.MinInt64) // the least window end not fired yet in this call
	for i := 0; i < len(o.panes.Starts()); i++ {
		first, last := o.a.WindowEnds(o.panes.Starts()[i])
		e := first
		if e-1 <= o.fired { // the pane's first window end after fired
			e = first + ((o.fired-(first-1))/step+1)*step
		}
		e = max(e, next)
		for ; e <= last && e-1 <= w; e += step {
			o.fire(e, out)
		}
		next = e
	}
	o.fired = w
	starts := o.panes.Starts()
	for len(starts) > 0 {
		if _, last := o.a.WindowEnds(starts[0]); !expired(last, w, o.cfg.lateness) {
			break
		}
		o.panes.Drop(starts[0])
		starts = o.panes.Starts()
	}
	o.gauges()
	return nil
}

// fire emits the result of the window ending at e for each key with a
// record in it.
func (o *paneOp) fire(e int64, out runtime.Output) {
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
			in[0].Range(func(_ string, acc *Acc) bool {
				if acc.Records > 0 {
					o.top.see(acc)
				}
				return true
			})
		}
		in[0].Range(func(key string, acc *Acc) bool {
			if acc.Records > 0 && o.top.keeps(acc) {
				o.res.emit(resultKey(key), start, e, acc, out)
			}
			return true
		})
		return
	}
	for _, sl := range in {
		sl.Range(func(key string, acc *Acc) bool {
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

// newFunction is the window's function: operator for sessions and
// processing time; for event-time tumbling and sliding windows paneOp,
// unless the state it restores is operator's (see chooser).
func newFunction(cfg config) runtime.KeyedProcessFunction {
	if cfg.processing || cfg.assigner.Kind == Session {
		return newOperator(cfg)
	}
	return &chooser{cfg: cfg}
}

// chooser opens paneOp, or operator when the job restores state that
// operator wrote: its windows are pending as a timer per key, and only
// those timers tell which of a key's windows fired (the snapshot holds no
// fired watermark). The state stays with operator from then on; a window
// new to a restored job takes panes. operator fires key by key, so it
// emits every result, keepMax or not: downstream maxima are the same.
type chooser struct {
	cfg  config
	impl runtime.KeyedProcessFunction
}

var (
	_ runtime.WatermarkListener = (*chooser)(nil)
	_ runtime.Snapshotter       = (*chooser)(nil)
)

// restoresOperatorState reports whether the restored state of the window
// is operator's: its panes without a fired watermark. Every subtask must
// decide alike, so not by its own timers: a subtask whose key groups hold
// no timer would take panes and write a fired watermark, and the next
// restore would put the other subtasks' keys on panes with it, firing
// their fired windows again. Every restoring subtask sees the table's name
// and the union list, whichever key groups it gets.
func restoresOperatorState(ctx *runtime.Context) bool {
	return ctx.RestoredKeyedState("panes") && ctx.OperatorState().Get(firedList) == nil
}

func (c *chooser) Open(ctx *runtime.Context) error {
	if restoresOperatorState(ctx) {
		c.impl = newOperator(c.cfg)
	} else {
		c.impl = newPaneOp(c.cfg)
	}
	return c.impl.Open(ctx)
}

func (c *chooser) ProcessElement(r runtime.Record, out runtime.Output) error {
	return c.impl.ProcessElement(r, out)
}

func (c *chooser) OnTimer(ts int64, d runtime.TimeDomain, out runtime.Output) error {
	return c.impl.OnTimer(ts, d, out)
}

func (c *chooser) OnWatermark(w int64, out runtime.Output) error {
	if l, ok := c.impl.(runtime.WatermarkListener); ok {
		return l.OnWatermark(w, out)
	}
	return nil
}

func (c *chooser) SnapshotState(id int64) error {
	if s, ok := c.impl.(runtime.Snapshotter); ok {
		return s.SnapshotState(id)
	}
	return nil
}

func (c *chooser) Close() error {
	if c.impl == nil { // Open failed before choosing
		return nil
	}
	return c.impl.Close()
}
