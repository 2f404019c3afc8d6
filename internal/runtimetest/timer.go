package runtimetest

import (
	"fmt"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// timerOptions: a keyed process function for timer tests. For each record
// it counts the record under its key and registers a timer delay after the
// record's timestamp (event time) or after now (processing time); when a
// timer fires it emits "<key> <ts> count=<n> wm=<watermark>". With
// watermarks: true it is also a WatermarkListener and emits "watermark <w>"
// at each advance of its input watermark.
type timerOptions struct {
	Delay      api.Duration `yaml:"delay"`
	Time       string       `yaml:"time"` // event (default) or processing
	Watermarks bool         `yaml:"watermarks"`
}

var timerDef = runtime.Definition{Type: "test-timer", Kind: api.KindOperator,
	Doc: "test only: registers a timer per record and reports it when it fires", Configure: func(c *runtime.ConfigContext) *runtime.Plan {
		var o timerOptions
		c.Decode(&o)
		p := &runtime.Plan{KeyedInput: true, NewOperator: func() runtime.Operator { return runtime.KeyedProcess(newTimerFn(o)) }}
		if o.Time != "processing" {
			p.EventTime = "test-timer fires on event time"
		}
		return p
	}}

type timerFn struct {
	o      timerOptions
	ctx    *runtime.Context
	counts *state.Value[int64]
}

func newTimerFn(o timerOptions) runtime.KeyedProcessFunction {
	if o.Watermarks {
		return &watermarkTimerFn{timerFn{o: o}}
	}
	return &timerFn{o: o}
}

// watermarkTimerFn is timerFn that hears the watermark too.
type watermarkTimerFn struct{ timerFn }

func (f *watermarkTimerFn) OnWatermark(w int64, out runtime.Output) error {
	if out != nil {
		out.Emit(runtime.Record{Key: []byte("watermark"), Timestamp: w, Value: fmt.Appendf(nil, "watermark %d", w)})
	}
	return nil
}

func (f *timerFn) Open(ctx *runtime.Context) (err error) {
	f.ctx = ctx
	f.counts, err = runtime.NewValue(ctx, "counts", state.Int64Codec{})
	return err
}

func (f *timerFn) ProcessElement(r runtime.Record, _ runtime.Output) error {
	n, _ := f.counts.Get()
	f.counts.Put(n + 1)
	if f.o.Time == "processing" {
		f.ctx.Timers().RegisterProcessingTime(time.Now().Add(f.o.Delay.D()).UnixMilli())
		return nil
	}
	f.ctx.Timers().RegisterEventTime(r.Timestamp + f.o.Delay.D().Milliseconds())
	return nil
}

func (f *timerFn) OnTimer(ts int64, d runtime.TimeDomain, out runtime.Output) error {
	n, _ := f.counts.Get()
	if out != nil {
		out.Emit(runtime.Record{Key: f.ctx.CurrentKey(), Timestamp: ts,
			Value: fmt.Appendf(nil, "%s %d count=%d wm=%d %s", f.ctx.CurrentKey(), ts, n, f.ctx.CurrentWatermark(), d)})
	}
	return nil
}

func (f *timerFn) Close() error { return nil }
