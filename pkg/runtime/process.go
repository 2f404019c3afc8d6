package runtime

import "errors"

// KeyedProcessFunction handles a keyed stream one record at a time, with
// keyed state, timers and side outputs (Flink's KeyedProcessFunction). The
// current key is set before each call: declare state handles in Open with
// NewValue, NewMap or NewList, register timers through ctx.Timers(), read
// the watermark with ctx.CurrentWatermark(). Adapt it to an Operator with
// KeyedProcess; its Plan sets KeyedInput (or GlobalKey).
//
// A function may also implement Snapshotter, CheckpointListener, Finisher
// and StateDescriber; the adapter passes the calls on.
type KeyedProcessFunction interface {
	Open(ctx *Context) error
	// ProcessElement handles one record; r shares memory with its batch.
	ProcessElement(r Record, out Output) error
	// OnTimer handles a timer of the current key that fired at ts.
	OnTimer(ts int64, domain TimeDomain, out Output) error
	Close() error
}

// KeyedProcess adapts f to the Operator contract.
func KeyedProcess(f KeyedProcessFunction) Operator { return &keyedProcess{f: f, delegate: delegate{f}} }

type keyedProcess struct {
	f   KeyedProcessFunction
	ctx *Context
	delegate
}

var (
	_ Operator           = (*keyedProcess)(nil)
	_ TimerListener      = (*keyedProcess)(nil)
	_ WatermarkListener  = (*keyedProcess)(nil)
	_ Snapshotter        = (*keyedProcess)(nil)
	_ CheckpointListener = (*keyedProcess)(nil)
	_ Finisher           = (*keyedProcess)(nil)
	_ StateDescriber     = (*keyedProcess)(nil)
)

func (k *keyedProcess) Open(ctx *Context) error {
	k.ctx = ctx
	return k.f.Open(ctx)
}

func (k *keyedProcess) Process(b *Batch, out Output) error {
	for i := range b.Records {
		k.ctx.SetCurrentKey(b.Records[i].Key)
		if err := k.f.ProcessElement(b.Records[i], out); err != nil {
			var bad *badRecord
			if !errors.As(err, &bad) {
				return err
			}
			if err := k.ctx.RecordError(b, i, out, bad.err); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *keyedProcess) OnTimer(ts int64, domain TimeDomain, out Output) error {
	return k.f.OnTimer(ts, domain, out)
}

// OnWatermark passes the watermark on to a function that is a
// WatermarkListener.
func (k *keyedProcess) OnWatermark(w int64, out Output) error {
	if l, ok := k.f.(WatermarkListener); ok {
		return l.OnWatermark(w, out)
	}
	return nil
}

func (k *keyedProcess) Close() error { return k.f.Close() }
