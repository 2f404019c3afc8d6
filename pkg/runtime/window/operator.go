package window

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Metric names of the window operator.
const (
	MetricLateDropped = "numLateRecordsDropped"
	MetricOpen        = "openWindows"
	MetricKeys        = "keys"
)

// operator is one subtask of a window: a KeyedProcessFunction, written on
// the public API like any user's. Keyed state holds, per key, the partial
// aggregates by pane start (tumbling, sliding) or by session start
// (sessions); timers fire windows and clean them up.
//
// Event time: the window [s, e) fires when the watermark reaches e-1, with
// its result stamped e-1. With allowedLateness L its state stays until the
// watermark reaches e-1+L, and a late record within that time updates the
// window, which fires again at once with the new result. A record later
// than that is counted and sent to the side output "late".
type operator struct {
	cfg      config
	a        Assigner
	ctx      *runtime.Context
	timers   runtime.Timers
	panes    *state.Map[int64, *Acc]
	sessions *state.Map[int64, *session]
	vals     []any
	buf      []byte
	late     *atomic.Int64
	open     *atomic.Int64
	openN    int64 // panes or sessions of the subtask
	keys     *atomic.Int64
	keysN    int64 // keys with panes or sessions
	sessBuf  []SessionWindow
	sessKeys []int64
	rec      runtime.Record // the record being evaluated
	res      results
}

// results writes window results: {"key", "windowStart", "windowEnd", the
// aggregates by name}, stamped windowEnd-1 so windows can be chained.
type results struct {
	aggs   []Aggregate
	global bool // no "key"
	buf    []byte
	arena  runtime.Arena // results' keys and values
	// win is `"windowStart":…,"windowEnd":…` of the window winOf last
	// emitted: a window fires for every key at once, and formatting its
	// two times was a third of writing a result.
	win   []byte
	winOf [2]int64
	// names[k] is `,"name":` of aggregate k.
	names [][]byte
}

func newResults(cfg config) results {
	r := results{aggs: cfg.aggs, global: cfg.global}
	for _, ag := range cfg.aggs {
		r.names = append(r.names, append(appendString([]byte{','}, []byte(ag.Name)), ':'))
	}
	return r
}

// session is a session's window end and partial aggregate.
type session struct {
	End int64
	Acc *Acc
}

func newOperator(cfg config) *operator {
	return &operator{cfg: cfg, a: cfg.assigner, vals: make([]any, cfg.nargs), res: newResults(cfg)}
}

var _ runtime.KeyedProcessFunction = (*operator)(nil)

func (o *operator) Open(ctx *runtime.Context) (err error) {
	o.ctx, o.timers = ctx, ctx.Timers()
	o.cfg.args = o.cfg.args.Clone()
	codec := accCodec{aggs: o.cfg.aggs}
	if o.a.Kind == Session {
		o.sessions, err = runtime.NewMap[int64, *session](ctx, "sessions", state.Int64Codec{}, sessionCodec{codec})
		o.open = ctx.Metrics().Gauge(MetricOpen)
		if err == nil {
			o.openN = int64(o.sessions.TotalLen())
		}
	} else {
		o.panes, err = runtime.NewMap[int64, *Acc](ctx, "panes", state.Int64Codec{}, codec)
		o.open = ctx.Metrics().Gauge(MetricOpen)
		if err == nil {
			o.openN = int64(o.panes.TotalLen())
		}
	}
	o.open.Store(o.openN)
	o.late = ctx.Metrics().Counter(MetricLateDropped)
	o.keys = ctx.Metrics().Gauge(MetricKeys)
	o.publishKeys()
	return err
}

func (o *operator) Close() error { return nil }

func (o *operator) publishKeys() {
	if o.sessions != nil {
		o.keysN = int64(o.sessions.NumKeys())
	} else if o.panes != nil {
		o.keysN = int64(o.panes.NumKeys())
	}
	o.keys.Store(o.keysN)
}

// keysDelta counts a key that got its first pane or session (+1) or lost
// its last (-1): counting the keys of every key group per change cost a
// pass over the groups per key.
func (o *operator) keysDelta(d int64) {
	o.keysN += d
	o.keys.Store(o.keysN)
}

// now is the time a record or timer is assigned by: its event time, or the
// wall clock for processing-time windows.
func (o *operator) now(r *runtime.Record) int64 {
	if o.cfg.processing {
		return time.Now().UnixMilli()
	}
	return r.Timestamp
}

// watermark is what lateness is judged by (none in processing time).
func (o *operator) watermark() int64 {
	if o.cfg.processing {
		return runtime.MinWatermark
	}
	return o.ctx.CurrentWatermark()
}

// fireAt is when the window ending at end fires: when the watermark reaches
// its last millisecond (end-1) in event time; in processing time when the
// clock reaches end, so no record can still arrive for it (a record read at
// end-1 after an end-1 timer would reopen the window).
func (o *operator) fireAt(end int64) int64 {
	if o.cfg.processing {
		return end
	}
	return end - 1
}

// endOf inverts fireAt for a timer's timestamp.
func (o *operator) endOf(ts int64) int64 {
	if o.cfg.processing {
		return ts
	}
	return ts + 1
}

func (o *operator) register(ts int64) {
	if o.cfg.processing {
		o.timers.RegisterProcessingTime(ts)
	} else {
		o.timers.RegisterEventTime(ts)
	}
}

func (o *operator) unregister(ts int64) {
	if o.cfg.processing {
		o.timers.DeleteProcessingTime(ts)
	} else {
		o.timers.DeleteEventTime(ts)
	}
}

func (o *operator) ProcessElement(r runtime.Record, out runtime.Output) error {
	if o.cfg.global {
		o.ctx.SetCurrentKey(nil)
	}
	if o.cfg.nargs > 0 { // no expression (count()): nothing to read
		// Evaluated from a field, not &r: the evaluator keeps the pointer
		// for the call, which moved every record to the heap.
		o.rec = r
		err := o.cfg.args.Eval(&o.rec, o.vals)
		o.rec = runtime.Record{}
		if err != nil {
			return runtime.BadRecord(err)
		}
	}
	ts := o.now(&r)
	if o.a.Kind == Session {
		return o.addToSession(r, ts, out)
	}
	return o.addToPane(r, ts, out)
}

// dropLate counts a record too late for every window it belongs to and
// sends it to the side output.
func (o *operator) dropLate(r runtime.Record, out runtime.Output) {
	o.late.Add(1)
	if out != nil {
		out.EmitTo(LateOutput, r)
	}
}

func (o *operator) addToPane(r runtime.Record, ts int64, out runtime.Output) error {
	wm := o.watermark()
	p := o.a.PaneStart(ts)
	first, last := o.a.WindowEnds(p)
	if expired(last, wm, o.cfg.lateness) {
		o.dropLate(r, out)
		return nil
	}
	var aux *keyAux
	if o.a.Kind == Sliding {
		aux = o.aux()
	}
	var acc *Acc
	ok := false
	if aux != nil && aux.last != nil && aux.lastP == p {
		acc, ok = aux.last, true
	} else {
		acc, ok = o.panes.Get(p)
	}
	if !ok {
		acc = newAcc(o.cfg.aggs)
	}
	if err := acc.Add(o.cfg.aggs, o.vals, ts); err != nil {
		return runtime.BadRecord(err) // before any state changed: the record can be skipped
	}
	if !ok {
		o.panes.Put(p, acc) // an existing pane is updated in place
	}
	if o.a.Kind == Sliding {
		if aux == nil {
			aux = &keyAux{}
			o.panes.SetAux(aux)
		}
		aux.lastP, aux.last = p, acc
	}
	if first-1 <= wm { // late for a fired window: the running result may cover its pane
		o.touchRunning(p, o.vals, ts)
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
func (o *operator) openDelta(d int64) int64 {
	o.openN += d
	return o.openN
}

func (o *operator) OnTimer(ts int64, _ runtime.TimeDomain, out runtime.Output) error {
	if o.a.Kind == Session {
		return o.sessionTimer(ts, out)
	}
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
		aux := o.aux()
		for p := from; p <= to; p += o.a.Pane() {
			if _, ok := o.panes.Get(p); ok {
				if aux != nil && aux.lastP == p {
					aux.last = nil
				}
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

// emitWindow emits the result of the window ending at e of the current key,
// if it holds any record, and reports whether the key's next window (ending
// a step later) holds a pane.
func (o *operator) emitWindow(e int64, out runtime.Output) (next bool) {
	from, to := o.a.PanesOf(e)
	nextFrom, nextTo := from+o.a.Step(), to+o.a.Step()
	var acc *Acc
	var rw *keyAux
	switch {
	case o.a.Kind == Tumbling:
		acc, _ = o.panes.Get(from)
		_, next = o.panes.Get(nextFrom)
	case o.cfg.invertible:
		rw, next = o.slidingResult(e)
		acc = rw.run
	default:
		o.panes.Range(func(p int64, pa *Acc) bool {
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
	if rw != nil {
		o.slideOn(rw, e, next)
	}
	return next
}

// slidingResult is the result of the sliding window ending at e when every
// aggregate can be taken back (count, integer sum, avg of integers): the
// key's running result (the previous window without the panes that left it,
// see slideOn) plus the panes that entered: a step's panes merged per
// firing instead of every pane of the window. The running result is rebuilt
// from the panes when it is not the window just before (a key's first
// window, a gap, a restore, a re-fired late window) or a float made the sum
// inexact. next reports whether the window after e holds a pane.
func (o *operator) slidingResult(e int64) (rw *keyAux, next bool) {
	step, pane := o.a.Step(), o.a.Pane()
	from, to := o.a.PanesOf(e)
	rw = o.aux()
	if rw == nil {
		rw = &keyAux{}
		o.panes.SetAux(rw) // nothing kept when the key has no pane
	}
	if rw.run == nil || rw.end != e-step || !rw.run.exactSums() {
		if rw.run == nil {
			rw.run = newAcc(o.cfg.aggs)
		} else {
			rw.run.reset()
		}
		o.panes.Range(func(p int64, pa *Acc) bool {
			if p >= from && p <= to {
				rw.run.Merge(o.cfg.aggs, pa)
			}
			return true
		})
	} else {
		for p := rw.to + pane; p <= to; p += pane { // the panes that entered
			if pa, ok := o.panes.Get(p); ok {
				rw.run.Merge(o.cfg.aggs, pa)
			}
		}
	}
	rw.end, rw.from, rw.to = e, from, to
	for p := to + step; p >= from+step && !next; p -= pane {
		_, next = o.panes.Get(p)
	}
	return rw, next
}

// slideOn takes the panes that leave before the key's next window out of
// its running result (rw, the current key's, see slidingResult), once the
// window ending at e was emitted and before the panes are dropped.
func (o *operator) slideOn(rw *keyAux, e int64, next bool) {
	if !next {
		rw.run = nil // the key's windows end here
		return
	}
	nextFrom := e + o.a.Step() - o.a.Size
	for p := rw.from; p < nextFrom; p += o.a.Pane() {
		if pa, ok := o.panes.Get(p); ok {
			rw.run.subtract(o.cfg.aggs, pa)
		}
	}
	rw.from = nextFrom
}

// touchRunning keeps a key's running result right when a late record lands
// in a pane it covers.
func (o *operator) touchRunning(p int64, vals []any, ts int64) {
	if !o.cfg.invertible {
		return
	}
	if rw := o.aux(); rw != nil && rw.run != nil && p >= rw.from && p <= rw.to {
		if err := rw.run.Add(o.cfg.aggs, vals, ts); err != nil {
			rw.run = nil
		}
	}
}

func (o *operator) addToSession(r runtime.Record, ts int64, out runtime.Output) error {
	wm := o.watermark()
	if done, err := o.extendSession(r, ts, wm, out); done {
		return err
	}
	w := SessionWindow{Start: ts, End: ts + o.a.Gap}
	o.sessBuf, o.sessKeys = o.sessBuf[:0], o.sessKeys[:0]
	o.sessions.Range(func(start int64, s *session) bool {
		o.sessBuf = append(o.sessBuf, SessionWindow{Start: start, End: s.End})
		o.sessKeys = append(o.sessKeys, start)
		return true
	})
	merged, absorbed := MergeSessions(o.sessBuf, w)
	if expired(merged.End, wm, o.cfg.lateness) {
		o.dropLate(r, out)
		return nil
	}
	acc := newAcc(o.cfg.aggs)
	if err := acc.Add(o.cfg.aggs, o.vals, ts); err != nil {
		return runtime.BadRecord(err) // before any state changed: the record can be skipped
	}
	for _, i := range absorbed {
		old, _ := o.sessions.Get(o.sessKeys[i])
		acc.Merge(o.cfg.aggs, old.Acc)
		o.sessions.Remove(o.sessKeys[i])
		o.unregisterSession(old.End)
	}
	if len(o.sessBuf) == 0 {
		o.keysDelta(1)
	}
	o.sessions.Put(merged.Start, &session{End: merged.End, Acc: acc})
	o.open.Store(o.openDelta(int64(1 - len(absorbed))))
	o.registerSession(merged.Start, merged.End, acc, wm, out)
	return nil
}

// registerSession registers the timers of the session [start, end) with
// accumulator acc at watermark wm: one to fire it, or, when it fired
// already (a late record within the lateness), it fires again now; and one
// to drop it once past its lateness.
func (o *operator) registerSession(start, end int64, acc *Acc, wm int64, out runtime.Output) {
	if refires(end, wm, o.cfg.lateness) {
		o.emit(start, end, acc, out)
	} else {
		o.register(o.fireAt(end))
	}
	if o.cfg.lateness > 0 {
		o.register(cleanupAt(end, o.cfg.lateness))
	}
}

// unregisterSession deletes the timers of the session ending at end
// (registerSession's).
func (o *operator) unregisterSession(end int64) {
	o.unregister(o.fireAt(end))
	if o.cfg.lateness > 0 {
		o.unregister(cleanupAt(end, o.cfg.lateness))
	}
}

func (o *operator) sessionTimer(ts int64, out runtime.Output) error {
	e := o.endOf(ts)
	var drop []int64
	o.sessions.Range(func(start int64, s *session) bool {
		if s.End == e {
			o.emit(start, s.End, s.Acc, out)
		}
		if expired(s.End, e-1, o.cfg.lateness) {
			drop = append(drop, start)
		}
		return true
	})
	for _, start := range drop {
		o.sessions.Remove(start)
		o.open.Store(o.openDelta(-1))
	}
	if len(drop) > 0 && o.sessions.Len() == 0 {
		o.keysDelta(-1)
	}
	return nil
}

// emit sends the current key's result of window [start, end).
func (o *operator) emit(start, end int64, acc *Acc, out runtime.Output) {
	o.res.emit(o.ctx.CurrentKey(), start, end, acc, out)
}

// emit sends key's result of window [start, end) (nil out: a sink, none).
func (r *results) emit(key []byte, start, end int64, acc *Acc, out runtime.Output) {
	if out == nil {
		return
	}
	b := r.buf[:0]
	b = append(b, '{')
	if !r.global {
		b = append(b, `"key":`...)
		b = appendString(b, key)
		b = append(b, ',')
	}
	if r.win == nil || r.winOf != [2]int64{start, end} {
		r.win = append(r.win[:0], `"windowStart":`...)
		r.win = strconv.AppendInt(r.win, start, 10)
		r.win = append(r.win, `,"windowEnd":`...)
		r.win = strconv.AppendInt(r.win, end, 10)
		r.winOf = [2]int64{start, end}
	}
	b = append(b, r.win...)
	for k, ag := range r.aggs {
		b = append(b, r.names[k]...)
		b = acc.appendResult(b, ag, k)
	}
	b = append(b, '}')
	r.buf = b
	out.Emit(runtime.Record{Key: r.arena.Copy(key), Value: r.arena.Copy(b), Timestamp: end - 1})
}

func appendString(b, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			if !utf8.Valid(s) {
				break
			}
			q, _ := json.Marshal(string(s))
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		if x == float64(int64(x)) && x < 1e15 && x > -1e15 {
			return strconv.AppendInt(b, int64(x), 10)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		return appendString(b, []byte(x))
	case bool:
		return strconv.AppendBool(b, x)
	}
	return append(b, jsonValue(v)...)
}

// sessionCodec encodes a session: its end, then its accumulator.
type sessionCodec struct{ acc accCodec }

func (c sessionCodec) Append(dst []byte, s *session) []byte {
	e := state.AppendEncoder(dst, 1)
	e.Varint(s.End)
	e.Bytes(c.acc.Append(nil, s.Acc))
	return e.Encoded()
}

func (c sessionCodec) Decode(b []byte) (*session, error) {
	d := state.NewDecoder("session window", b, 1)
	end := d.Varint()
	raw := d.Bytes()
	if err := d.Finish(); err != nil {
		return nil, err
	}
	acc, err := c.acc.Decode(raw)
	if err != nil {
		return nil, err
	}
	return &session{End: end, Acc: acc}, nil
}
