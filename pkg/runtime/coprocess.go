package runtime

import "fmt"

// Operators with two inputs (joins). An operator reads several inputs when
// its spec lists several upstream operators in from, or when its type takes
// them from options (Definition.InputOptions: a join's left and right).
// Each batch says which input it came from (Batch.Input). In exactly-once
// mode a checkpoint barrier that arrived on one input holds back only that
// input until the barrier arrived on every input (alignment); the input
// watermark is the minimum over all inputs' channels. Keyed state is shared
// by the inputs: with Plan.InputKeys every input is partitioned by its own
// key into the same key groups, so both sides of a key meet in one subtask.

// KeySelector computes the key of a record (Flink's KeySelector), for
// Plan.InputKeys. The engine calls it on the upstream subtask's goroutine,
// one selector per upstream subtask and input, so it needs no locking. The
// returned bytes become Record.Key and must not be changed afterwards (an
// arena is a good home for them). An error fails the upstream subtask;
// it should name the record.
type KeySelector interface {
	Key(r *Record) ([]byte, error)
}

// KeyedCoProcessFunction handles two keyed streams one record at a time,
// with keyed state shared by both and timers (Flink's
// KeyedCoProcessFunction): ProcessElement1 gets the records of the first
// input, ProcessElement2 those of the second, each with its key set as the
// current key. Adapt it to an Operator with KeyedCoProcess; its Plan sets
// InputKeys (or KeyedInput behind keyBy operators).
//
// A function may also implement Snapshotter, CheckpointListener, Finisher
// and StateDescriber; the adapter passes the calls on.
type KeyedCoProcessFunction interface {
	Open(ctx *Context) error
	ProcessElement1(r Record, out Output) error
	ProcessElement2(r Record, out Output) error
	// OnTimer handles a timer of the current key that fired at ts.
	OnTimer(ts int64, domain TimeDomain, out Output) error
	Close() error
}

// KeyedCoProcess adapts f to the Operator contract.
func KeyedCoProcess(f KeyedCoProcessFunction) Operator {
	return &keyedCoProcess{f: f, delegate: delegate{f}}
}

type keyedCoProcess struct {
	f   KeyedCoProcessFunction
	ctx *Context
	delegate
}

var (
	_ Operator      = (*keyedCoProcess)(nil)
	_ TimerListener = (*keyedCoProcess)(nil)
)

func (k *keyedCoProcess) Open(ctx *Context) error {
	k.ctx = ctx
	return k.f.Open(ctx)
}

func (k *keyedCoProcess) Process(b *Batch, out Output) error {
	process := k.f.ProcessElement1
	switch b.Input {
	case 0:
	case 1:
		process = k.f.ProcessElement2
	default:
		return fmt.Errorf("a two-input function got a batch of input %d (bug: the operator has more than two inputs)", b.Input)
	}
	for i := range b.Records {
		k.ctx.SetCurrentKey(b.Records[i].Key)
		if err := process(b.Records[i], out); err != nil {
			return err
		}
	}
	return nil
}

func (k *keyedCoProcess) OnTimer(ts int64, domain TimeDomain, out Output) error {
	return k.f.OnTimer(ts, domain, out)
}

func (k *keyedCoProcess) Close() error { return k.f.Close() }

// delegate passes the optional operator calls on to impl when it
// implements them (the process function adapters).
type delegate struct{ impl any }

var (
	_ Snapshotter        = delegate{}
	_ CheckpointListener = delegate{}
	_ Finisher           = delegate{}
	_ StateDescriber     = delegate{}
)

func (d delegate) SnapshotState(id int64) error {
	if s, ok := d.impl.(Snapshotter); ok {
		return s.SnapshotState(id)
	}
	return nil
}

func (d delegate) NotifyCheckpointComplete(id int64) error {
	if l, ok := d.impl.(CheckpointListener); ok {
		return l.NotifyCheckpointComplete(id)
	}
	return nil
}

func (d delegate) NotifyCheckpointAborted(id int64) {
	if l, ok := d.impl.(CheckpointListener); ok {
		l.NotifyCheckpointAborted(id)
	}
}

func (d delegate) Finish(out Output) error {
	if f, ok := d.impl.(Finisher); ok {
		return f.Finish(out)
	}
	return nil
}

func (d delegate) DescribeState() map[string]any {
	if s, ok := d.impl.(StateDescriber); ok {
		return s.DescribeState()
	}
	return nil
}

// InputOptions implements api.InputDeclarer: the options that hold the
// inputs of typ (Definition.InputOptions).
func (r *Registry) InputOptions(typ string) []string {
	d, _ := r.Lookup(typ, true)
	return d.InputOptions
}
