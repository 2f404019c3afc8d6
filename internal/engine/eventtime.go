package engine

import (
	"fmt"

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
	ms, err := expr.Millis(v)
	if err != nil {
		return fmt.Errorf("eventTime.timestamp %q: %w", e.ts.Source(), err)
	}
	r.Timestamp = ms
	return nil
}
