package transform

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/internal/itoa"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
	"github.com/flinkgo/flinkgo/pkg/state"
)

var keyedDefs = []runtime.Definition{
	{Type: "count", Kind: api.KindOperator, PebbleState: true,
		Doc: `counts records per key (after keyBy), emitting {"key": k, "count": n} on every update`, Configure: configureCount},
	{Type: "reduce", Kind: api.KindOperator, PebbleState: true,
		Doc: "combines records per key (after keyBy): expr over acc and the record's fields; optional init; optional ttl (event time) forgets a key's acc", Configure: configureReduce},
}

func configureCount(c *runtime.ConfigContext) *runtime.Plan {
	var o struct{}
	c.Decode(&o)
	// It reads no Values: a record is its key.
	return &runtime.Plan{KeyedInput: true, InputValues: runtime.ValuesUnread, State: &runtime.StateMeaning{Version: countStateVersion},
		NewOperator: func() runtime.Operator { return &countOp{} }}
}

// countOp keeps a count per key in keyed value state.
type countOp struct {
	counts *state.Value[int64]
	arena  runtime.Arena
}

func (o *countOp) Open(ctx *runtime.Context) (err error) {
	o.counts, err = runtime.NewValue[int64](ctx, "count", state.Int64Codec{})
	return err
}

func (o *countOp) Close() error { return nil }

func (o *countOp) Process(b *runtime.Batch, out runtime.Output) error {
	kb := o.counts
	for i := range b.Records {
		r := b.Records[i]
		o.setKey(r.Key)
		n, _ := kb.Get()
		n++
		kb.Put(n)
		r.Value = o.arena.Append(len(r.Key)*2+40, func(dst []byte) []byte {
			dst = append(dst, `{"key":`...)
			dst = jsonstring.AppendBytes(dst, r.Key)
			dst = append(dst, `,"count":`...)
			dst = itoa.AppendInt(dst, n)
			return append(dst, '}')
		})
		if out != nil {
			out.Emit(r)
		}
	}
	return nil
}

func (o *countOp) setKey(k []byte) { o.counts.SetKey(k) }

type reduceOptions struct {
	Expr string `yaml:"expr,required"`
	Init string `yaml:"init"`
	// TTL forgets a key's accumulator once event time is more than TTL
	// past the key's last record (see reduceTTLOp).
	TTL *api.Duration `yaml:"ttl"`
}

func configureReduce(c *runtime.ConfigContext) *runtime.Plan {
	var o reduceOptions
	c.Decode(&o)
	p := compile(c, "expr", o.Expr, expr.Any, "acc")
	var init *expr.Program
	if o.Init != "" {
		init = compile(c, "init", o.Init, expr.Any)
		if init == nil {
			return nil
		}
	}
	var ttl int64
	if o.TTL != nil {
		if ttl = o.TTL.D().Milliseconds(); ttl <= 0 {
			c.Errorf("ttl", "ttl must be at least 1ms (event time after a key's last record at which its acc is forgotten), e.g. ttl: 1h; omit it to keep every key's acc")
			return nil
		}
	}
	if p == nil {
		return nil
	}
	fold := expr.NewFold(p, init, "acc")
	// ValuesDropped: the accumulator and what is emitted are built in
	// the operator's arena (or decoded, copying) from the record's Value.
	return &runtime.Plan{KeyedInput: true, OnError: true, InputValues: runtime.ValuesDropped, State: reduceMeaning(o),
		NewOperator: func() runtime.Operator {
			op := &reduceOp{prog: p.Clone(), ttl: ttl}
			if init != nil {
				op.init = init.Clone()
			}
			if fold != nil {
				op.fold = fold.Clone()
			}
			if ttl > 0 {
				return &reduceTTLOp{reduceOp: op, nextSweep: math.MinInt64}
			}
			return op
		}}
}

// reduceOp folds each key's records into an accumulator: acc starts as the
// init expression's value (or the first record's value) and becomes expr
// evaluated with acc bound; every update is emitted. With a fold (the
// expression's VM-free form) a record is folded into the accumulator's
// JSON; a record the fold cannot take goes to the VM.
type reduceOp struct {
	ctx     *runtime.Context
	prog    *expr.Program
	init    *expr.Program
	fold    *expr.Fold // nil: none
	acc     *state.Value[*accum]
	arena   runtime.Arena
	scratch []byte
	// rec is the record being reduced: the expressions take its address,
	// which would move a parameter to the heap, once per record.
	rec runtime.Record
	// ttl (ms; 0: none): a record more than ttl after its key's last one
	// starts from init again, and accumulators keep their last timestamp.
	ttl int64
}

func (o *reduceOp) Open(ctx *runtime.Context) (err error) {
	o.ctx = ctx
	o.acc, err = runtime.NewValue[*accum](ctx, "acc", accumCodec{timestamps: o.ttl > 0})
	return err
}

func (o *reduceOp) Close() error { return nil }

func (o *reduceOp) Process(b *runtime.Batch, out runtime.Output) error {
	for i := range b.Records {
		o.rec = b.Records[i]
		if err := o.reduce(&o.rec, out); err != nil {
			if err := o.ctx.RecordError(b, i, out, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// reduce folds one record into its key's accumulator and emits the new
// value. A failed record leaves the accumulator as it was.
func (o *reduceOp) reduce(r *runtime.Record, out runtime.Output) error {
	o.acc.SetKey(r.Key)
	a, ok := o.acc.Get()
	if ok && o.ttl > 0 && a.expired(r.Timestamp, o.ttl) {
		a, ok = nil, false // Put below overwrites it; a failed record leaves it
	}
	if o.fold != nil && (ok && !a.vm || !ok && o.init != nil) {
		var cur []byte // nil: the init's
		var at []int32
		if ok {
			cur, at = a.json, a.at
		}
		dst := o.arena.Alloc(len(r.Value) + len(cur) + 64)
		if v, done := o.fold.Append(dst, r, cur, at); done {
			v = o.arena.Keep(dst, v)
			if !ok {
				a = &accum{}
			}
			a.setJSON(v, o.fold.Places())
			if o.ttl > 0 {
				a.seen(r.Timestamp)
			}
			if !ok || o.acc.Copies() {
				o.acc.Put(a)
			}
			if out != nil {
				r.Value = v
				out.Emit(*r)
			}
			return nil
		}
		o.arena.Keep(dst, nil) // all of dst goes back
	}
	var acc any
	var err error
	switch {
	case !ok && o.init == nil:
		acc = decodeValue(r.Value)
	default:
		if ok {
			acc, err = a.value()
		} else {
			acc, err = o.init.Eval(r)
		}
		if err != nil {
			return err
		}
		o.prog.Bind("acc", acc)
		if acc, err = o.prog.Eval(r); err != nil {
			return err
		}
	}
	v, err := o.value(acc)
	if err != nil {
		return err
	}
	if !ok {
		a = &accum{}
	}
	if o.fold != nil && expr.ExactJSON(acc) {
		a.setJSON(v, nil) // an object: v is its JSON
	} else {
		a.setValue(acc)
	}
	if o.ttl > 0 {
		a.seen(r.Timestamp)
	}
	if !ok || o.acc.Copies() {
		o.acc.Put(a)
	}
	if out != nil {
		r.Value = v
		out.Emit(*r)
	}
	return nil
}

// reduceTTLOp is a reduce with a ttl, Flink's state TTL in event time: a
// key's accumulator is forgotten once a record of the key comes more than
// ttl after the key's latest one (by their timestamps: the record starts
// from init again, as a new key's first does), and the watermark sweeps
// away every accumulator it is more than ttl past, so that keys no record
// comes for again (a window's, a session's) do not stay forever. A sweep
// runs when the watermark has moved ttl since the last one: an
// accumulator stays at most twice ttl past its last record. What a record
// reads depends only on the records' timestamps, not on when sweeps run,
// except for a late record (behind the watermark) whose key's latest
// record the watermark is more than ttl past: it may find the accumulator
// swept and start from init. It chains
// as a reduce without a ttl does (the watermark reaches it through the
// chain).
type reduceTTLOp struct {
	*reduceOp
	nextSweep int64 // the watermark at which to sweep next
}

var _ runtime.WatermarkListener = (*reduceTTLOp)(nil)

func (o *reduceTTLOp) OnWatermark(w int64, _ runtime.Output) error {
	// At the end of input (or stop --drain) nothing more comes: a sweep
	// would only empty a drained savepoint and time restored keys at
	// MaxWatermark.
	if w < o.nextSweep || w == runtime.MaxWatermark {
		return nil
	}
	o.nextSweep = math.MaxInt64
	if w < math.MaxInt64-o.ttl {
		o.nextSweep = w + o.ttl
	}
	o.acc.DeleteWhere(func(a *accum) bool {
		if !a.hasTS { // restored from a snapshot without timestamps
			a.seen(w)
			return false
		}
		return a.expired(w, o.ttl)
	})
	return nil
}

// value encodes an accumulator as a record value.
func (o *reduceOp) value(acc any) ([]byte, error) {
	return toBytes(&o.arena, &o.scratch, acc)
}

// decodeValue reads a record value as JSON when it is JSON, else as text.
func decodeValue(b []byte) any {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	return expr.Normalize(v)
}

// jsonCodec stores accumulators as JSON.
type jsonCodec struct{}

func (jsonCodec) Append(dst []byte, v any) []byte {
	out, err := expr.AppendJSON(dst, v)
	if err != nil {
		panic(fmt.Sprintf("transform: accumulator %v cannot be encoded as JSON: %v", v, err))
	}
	return out
}

func (jsonCodec) Decode(b []byte) (any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return expr.Normalize(v), nil
}
