package transform

import (
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

type exprOptions struct {
	Expr string `yaml:"expr,required"`
}

var mapFilterDefs = []runtime.Definition{
	{Type: "map", Kind: api.KindOperator,
		Doc: "replaces each record's value by an expression (JSON objects allowed): expr", Configure: configureMap},
	{Type: "filter", Kind: api.KindOperator,
		Doc: "keeps the records for which a boolean expression is true: expr", Configure: configureFilter, KeepsSchema: true},
	{Type: "keyBy", Kind: api.KindOperator,
		Doc: "sets each record's key by an expression; the next operator is partitioned by key: expr", Configure: configureKeyBy, KeepsSchema: true},
}

func configureMap(c *runtime.ConfigContext) *runtime.Plan {
	var o exprOptions
	c.Decode(&o)
	p := compile(c, "expr", o.Expr, expr.Any)
	if p == nil {
		return nil
	}
	// Its results are its own bytes (the arena's); a dead letter copies.
	return &runtime.Plan{OnError: true, InputValues: runtime.ValuesDropped,
		NewOperator: func() runtime.Operator { return &mapOp{prog: p.Clone()} }}
}

// mapOp replaces each record's value by the expression's result.
type mapOp struct {
	ctx   *runtime.Context
	prog  *expr.Program
	arena runtime.Arena
}

func (m *mapOp) Open(ctx *runtime.Context) error { m.ctx = ctx; return nil }
func (m *mapOp) Close() error                    { return nil }

// RecycleValues implements runtime.ValueRecycler: it keeps none of its
// results, so once the engine says they are dead the arena starts over.
func (m *mapOp) RecycleValues() { m.arena.Rewind() }

func (m *mapOp) Process(b *runtime.Batch, out runtime.Output) error {
	for i := range b.Records {
		// Straight into the arena, room for a result somewhat longer than
		// the record (a longer one is its own allocation); &b.Records[i],
		// not a copy's address: that would move each record to the heap.
		dst := m.arena.Alloc(len(b.Records[i].Value) + 64)
		v, err := m.prog.AppendValue(dst, &b.Records[i])
		if err != nil {
			m.arena.Keep(dst, nil) // all of dst goes back
			if err := m.ctx.RecordError(b, i, out, err); err != nil {
				return err
			}
			continue
		}
		v = m.arena.Keep(dst, v)
		r := b.Records[i]
		r.Value = v
		out.Emit(r)
	}
	return nil
}

func configureFilter(c *runtime.ConfigContext) *runtime.Plan {
	var o exprOptions
	c.Decode(&o)
	p := compile(c, "expr", o.Expr, expr.Bool)
	if p == nil {
		return nil
	}
	return &runtime.Plan{OnError: true, InputValues: runtime.ValuesForwarded,
		NewOperator: func() runtime.Operator { return &filterOp{prog: p.Clone()} }}
}

// filterOp keeps records for which the expression is true.
type filterOp struct {
	ctx  *runtime.Context
	prog *expr.Program
}

func (f *filterOp) Open(ctx *runtime.Context) error { f.ctx = ctx; return nil }
func (f *filterOp) Close() error                    { return nil }

func (f *filterOp) Process(b *runtime.Batch, out runtime.Output) error {
	if fw, ok := out.(runtime.BatchForwarder); ok {
		return f.forward(b, out, fw)
	}
	return f.emit(b, 0, out)
}

// forward evaluates every record of b first. When it keeps at least half
// of them it moves those to the front of b, in order, and hands b on whole
// if the output takes it (runtime.BatchForwarder); with fewer it emits
// them one by one, to be buffered with the next ones in fuller batches
// (as many writes as moving them would be). At a record whose evaluation
// fails it emits those kept before it and goes on one by one (the
// error's handling may emit too: a dead letter, after the records before).
func (f *filterOp) forward(b *runtime.Batch, out runtime.Output, fw runtime.BatchForwarder) error {
	n := len(b.Records)
	var keep [runtime.DefaultBatchSize / 64]uint64
	if n > len(keep)*64 {
		return f.emit(b, 0, out)
	}
	kept := 0
	for i := range b.Records {
		ok, err := f.prog.EvalBool(&b.Records[i])
		if err != nil {
			emitKept(b, &keep, i, out)
			return f.emit(b, i, out)
		}
		if ok {
			keep[i/64] |= 1 << (i % 64)
			kept++
		}
	}
	if kept == 0 || 2*kept < n {
		emitKept(b, &keep, n, out)
		return nil
	}
	if kept < n {
		j := 0
		for i := range n {
			if keep[i/64]&(1<<(i%64)) != 0 {
				b.Records[j] = b.Records[i]
				j++
			}
		}
		b.Records = b.Records[:kept]
	}
	if fw.ForwardBatch(b) {
		return nil
	}
	for _, r := range b.Records {
		out.Emit(r)
	}
	b.Records = b.Records[:n] // whole again: the engine clears it all for the pool
	return nil
}

// emitKept emits the records of b before index end whose bit is set in keep.
func emitKept(b *runtime.Batch, keep *[runtime.DefaultBatchSize / 64]uint64, end int, out runtime.Output) {
	for i := range end {
		if keep[i/64]&(1<<(i%64)) != 0 {
			out.Emit(b.Records[i])
		}
	}
}

// emit evaluates the records of b from index from and emits those kept.
func (f *filterOp) emit(b *runtime.Batch, from int, out runtime.Output) error {
	for i := from; i < len(b.Records); i++ {
		ok, err := f.prog.EvalBool(&b.Records[i])
		if err != nil {
			if err := f.ctx.RecordError(b, i, out, err); err != nil {
				return err
			}
			continue
		}
		if ok {
			out.Emit(b.Records[i])
		}
	}
	return nil
}

func configureKeyBy(c *runtime.ConfigContext) *runtime.Plan {
	var o exprOptions
	c.Decode(&o)
	p := compile(c, "expr", o.Expr, expr.Any)
	if p == nil {
		return nil
	}
	return &runtime.Plan{KeyedOutput: true, OnError: true, InputValues: runtime.ValuesForwarded, KeyExpr: normalize(o.Expr),
		NewOperator: func() runtime.Operator { return &keyByOp{prog: p.Clone()} }}
}

// keyByOp sets each record's key; the runtime partitions by it.
type keyByOp struct {
	ctx     *runtime.Context
	prog    *expr.Program
	arena   runtime.Arena
	scratch []byte
}

func (k *keyByOp) Open(ctx *runtime.Context) error { k.ctx = ctx; return nil }
func (k *keyByOp) Close() error                    { return nil }

func (k *keyByOp) Process(b *runtime.Batch, out runtime.Output) error {
	for i := range b.Records {
		// &b.Records[i], not a copy's address: that would move each record
		// to the heap.
		v, err := k.prog.AppendValue(k.scratch[:0], &b.Records[i])
		if err != nil {
			if err := k.ctx.RecordError(b, i, out, err); err != nil {
				return err
			}
			continue
		}
		k.scratch = v
		r := b.Records[i]
		r.Key = k.arena.Copy(v)
		out.Emit(r)
	}
	return nil
}
