package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// eventTime is a source's event-time setup, compiled from its spec.
type eventTime struct {
	ts              *expr.Program // nil: the record's own timestamp
	bound, idle     int64         // ms
	advanceWhenIdle bool
	skipBad         bool
}

// compileEventTime checks a source's eventTime block, reporting problems
// through c; nil when the source has none (or it is wrong).
func compileEventTime(c *runtime.ConfigContext, spec *api.EventTimeSpec, plan *runtime.Plan) *eventTime {
	if spec == nil || plan == nil {
		return nil
	}
	et := &eventTime{bound: spec.Bound().Milliseconds(), idle: spec.Idle().Milliseconds(),
		advanceWhenIdle: spec.AdvanceWhenIdle, skipBad: plan.SkipBadTimestamps}
	if spec.Timestamp != "" {
		p, err := expr.CompileWith(c.Schema, spec.Timestamp, expr.Any)
		if err != nil {
			c.Errorf("eventTime.timestamp", "%v", err)
			return nil
		}
		et.ts = p
	}
	return et
}

// forSubtask returns a copy with its own expression scratch space.
func (e *eventTime) forSubtask() *eventTime {
	c := *e
	if e.ts != nil {
		c.ts = e.ts.Clone()
	}
	return &c
}

// stamp sets r.Timestamp from the timestamp expression.
func (e *eventTime) stamp(r *runtime.Record) error {
	if e.ts == nil {
		return nil
	}
	v, err := e.ts.Eval(r)
	if err != nil {
		return err
	}
	ms, err := toMillis(v)
	if err != nil {
		return fmt.Errorf("eventTime.timestamp %q: %w", e.ts.Source(), err)
	}
	r.Timestamp = ms
	return nil
}

// toMillis reads an event time: a number of milliseconds since the epoch,
// an RFC 3339 string, or a time.
func toMillis(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x > 9e18 || x < -9e18 {
			return 0, fmt.Errorf("gave %v, not a time in milliseconds", x)
		}
		return int64(x), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return 0, fmt.Errorf("gave %q, neither a number of milliseconds nor an RFC 3339 time", x)
		}
		return t.UnixMilli(), nil
	case time.Time:
		return x.UnixMilli(), nil
	case nil:
		return 0, fmt.Errorf("gave nothing (a missing field?)")
	}
	return 0, fmt.Errorf("gave %v (%T), not a time", v, v)
}
