package main

import (
	"fmt"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// alertDefinition is the "inactivity-alert" operator type: after a keyBy,
// it emits {"key": k, "lastSeen": t, "alertAt": t + quiet} when a key has
// seen no record for quiet (default 5m) of event time. It is a keyed
// process function: keyed state holds each key's last event time, and an
// event-time timer per key fires when the watermark passes lastSeen + quiet.
// Every record moves the key's timer; timers are in every checkpoint and
// savepoint, so alerts survive restarts and rescaling.
func alertDefinition() runtime.Definition {
	return runtime.Definition{
		Type: "inactivity-alert",
		Kind: api.KindOperator,
		Doc:  "alerts when a key sees no record for quiet (default 5m) of event time (after keyBy)",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			var o struct {
				Quiet *api.Duration `yaml:"quiet"`
			}
			c.Decode(&o)
			quiet := 5 * time.Minute
			if o.Quiet != nil {
				quiet = o.Quiet.D()
			}
			if quiet <= 0 {
				c.Errorf("quiet", "must be more than 0, got %s", quiet)
				return nil
			}
			return &runtime.Plan{KeyedInput: true, EventTime: "inactivity-alert follows event time",
				NewOperator: func() runtime.Operator { return runtime.KeyedProcess(&alert{quiet: quiet.Milliseconds()}) }}
		},
	}
}

type alert struct {
	quiet    int64 // ms
	ctx      *runtime.Context
	lastSeen *state.Value[int64]
}

func (a *alert) Open(ctx *runtime.Context) (err error) {
	a.ctx = ctx
	a.lastSeen, err = runtime.NewValue(ctx, "lastSeen", state.Int64Codec{})
	return err
}

// ProcessElement moves the key's timer to quiet after its latest record.
func (a *alert) ProcessElement(r runtime.Record, _ runtime.Output) error {
	last, seen := a.lastSeen.Get()
	if seen && r.Timestamp <= last {
		return nil // an older record (out of order) changes nothing
	}
	if seen {
		a.ctx.Timers().DeleteEventTime(last + a.quiet)
	}
	a.lastSeen.Put(r.Timestamp)
	a.ctx.Timers().RegisterEventTime(r.Timestamp + a.quiet)
	return nil
}

// OnTimer fires when the watermark passed lastSeen + quiet: the key has been
// quiet that long.
func (a *alert) OnTimer(ts int64, _ runtime.TimeDomain, out runtime.Output) error {
	last, _ := a.lastSeen.Get()
	if out != nil {
		key := a.ctx.CurrentKey()
		out.Emit(runtime.Record{Key: append([]byte(nil), key...), Timestamp: ts,
			Value: fmt.Appendf(nil, `{"key":%q,"lastSeen":%d,"alertAt":%d}`, key, last, ts)})
	}
	a.lastSeen.Delete()
	return nil
}

func (a *alert) Close() error { return nil }
