package window

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Metric names of the window operator.
const (
	metricLateDropped = "numLateRecordsDropped"
	metricOpen        = "openWindows"
	metricKeys        = "keys"
)

// operator is one subtask of a session window: a KeyedProcessFunction,
// written on the public API like any user's. Keyed state holds, per key,
// the partial aggregate of each session by its start; timers fire sessions
// and clean them up. Tumbling and sliding windows are paneOp's.
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
	sessions *state.Map[int64, *session]
	vals     []any
	buf      []byte
	late     *atomic.Int64
	open     *atomic.Int64
	openN    int64 // sessions of the subtask
	keys     *atomic.Int64
	keysN    int64 // keys with sessions
	sessBuf  []SessionWindow
	sessKeys []int64
	rec      runtime.Record // the record being evaluated
	res      results
}

// results writes window results: {"key", "windowStart", "windowEnd", the
// aggregates by name}, stamped windowEnd-1 so windows can be chained.
type results struct {
	aggs   []aggregate
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
		r.names = append(r.names, append(jsonstring.Append([]byte{','}, ag.Name), ':'))
	}
	return r
}

// session is a session's window end and partial aggregate.
type session struct {
	End int64
	Acc *accum
}

func newOperator(cfg config) *operator {
	return &operator{cfg: cfg, a: cfg.assigner, vals: make([]any, cfg.nargs), res: newResults(cfg)}
}

var _ runtime.KeyedProcessFunction = (*operator)(nil)

func (o *operator) Open(ctx *runtime.Context) (err error) {
	o.ctx, o.timers = ctx, ctx.Timers()
	o.cfg.args = o.cfg.args.Clone()
	o.sessions, err = runtime.NewMap[int64, *session](ctx, "sessions", state.Int64Codec{}, sessionCodec{accCodec{aggs: o.cfg.aggs}})
	o.open = ctx.Metrics().Gauge(metricOpen)
	if err == nil {
		o.openN = int64(o.sessions.TotalLen())
	}
	o.open.Store(o.openN)
	o.late = ctx.Metrics().Counter(metricLateDropped)
	o.keys = ctx.Metrics().Gauge(metricKeys)
	o.publishKeys()
	return err
}

func (o *operator) Close() error { return nil }

func (o *operator) publishKeys() {
	if o.sessions != nil {
		o.keysN = int64(o.sessions.NumKeys())
	}
	o.keys.Store(o.keysN)
}

// keysDelta counts a key that got its first session (+1) or lost
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
	return o.addToSession(r, o.now(&r), out)
}

// dropLate counts a record too late for every window it belongs to and
// sends it to the side output.
func (o *operator) dropLate(r runtime.Record, out runtime.Output) {
	o.late.Add(1)
	if out != nil {
		out.EmitTo(lateOutput, r)
	}
}

// openDelta counts sessions created (+) or dropped (-).
func (o *operator) openDelta(d int64) int64 {
	o.openN += d
	return o.openN
}

func (o *operator) OnTimer(ts int64, _ runtime.TimeDomain, out runtime.Output) error {
	return o.sessionTimer(ts, out)
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
func (o *operator) registerSession(start, end int64, acc *accum, wm int64, out runtime.Output) {
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
func (o *operator) emit(start, end int64, acc *accum, out runtime.Output) {
	o.res.emit(o.ctx.CurrentKey(), start, end, acc, out)
}

// emit sends key's result of window [start, end) (nil out: a sink, none).
func (r *results) emit(key []byte, start, end int64, acc *accum, out runtime.Output) {
	if out == nil {
		return
	}
	b := r.buf[:0]
	b = append(b, '{')
	if !r.global {
		b = append(b, `"key":`...)
		b = jsonstring.AppendBytes(b, key)
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
		return jsonstring.Append(b, x)
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
