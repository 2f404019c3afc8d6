package join

import (
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// intervalJoin is one subtask of an interval join: left row l and right
// row r of one key match when l.ts+lower <= r.ts <= l.ts+upper (both
// bounds included, as in Flink). A row is matched against the other side's
// stored rows when it arrives, and kept by its timestamp for as long as a
// row still to come could match it: a left row until the watermark reaches
// l.ts+upper, a right row until it reaches r.ts-lower (rows at or behind
// the watermark are late, so none can come after that). A timer at that
// time drops it; in a left outer join a left row that matched nothing is
// then emitted with an empty right side, stamped l.ts+upper. A match is
// stamped with the later of its rows' times (or the timestamp expression).
type intervalJoin struct {
	base
	lower, upper int64
	err          error
}

var (
	_ runtime.KeyedCoProcessFunction = (*intervalJoin)(nil)
	_ runtime.StateDescriber         = (*intervalJoin)(nil)
)

func newIntervalJoin(cfg config, lower, upper int64) *intervalJoin {
	return &intervalJoin{base: base{cfg: cfg}, lower: lower, upper: upper}
}

func (o *intervalJoin) Open(ctx *runtime.Context) error { return o.open(ctx) }

func (o *intervalJoin) ProcessElement1(r runtime.Record, out runtime.Output) error {
	if r.Timestamp <= o.ctx.CurrentWatermark() {
		o.dropLate(left, r, out)
		return nil
	}
	l := newRow(r)
	lo, hi := l.ts+o.lower, l.ts+o.upper
	o.sides[right].Range(func(ts int64, rs *rows) bool {
		if ts < lo || ts > hi {
			return true
		}
		for i := range rs.list {
			if o.match(&l, &rs.list[i], out) != nil {
				return false
			}
		}
		return true
	})
	if err := o.takeErr(); err != nil {
		return err
	}
	o.store(left, l.ts, l)
	o.timers.RegisterEventTime(hi)
	return nil
}

func (o *intervalJoin) ProcessElement2(r runtime.Record, out runtime.Output) error {
	if r.Timestamp <= o.ctx.CurrentWatermark() {
		o.dropLate(right, r, out)
		return nil
	}
	rw := newRow(r)
	lo, hi := rw.ts-o.upper, rw.ts-o.lower
	o.sides[left].Range(func(ts int64, ls *rows) bool {
		if ts < lo || ts > hi {
			return true
		}
		for i := range ls.list {
			if o.match(&ls.list[i], &rw, out) != nil {
				return false
			}
		}
		return true
	})
	if err := o.takeErr(); err != nil {
		return err
	}
	o.store(right, rw.ts, rw)
	o.timers.RegisterEventTime(hi)
	return nil
}

// match emits the result of l and r (where permitting) and marks l
// matched; an error is kept for takeErr (it happens inside a Range).
func (o *intervalJoin) match(l, r *row, out runtime.Output) error {
	ok, err := o.em.emit(l, r, max(l.ts, r.ts), out)
	if err != nil {
		o.err = err
		return err
	}
	if ok {
		l.matched = true
	}
	return nil
}

func (o *intervalJoin) takeErr() error {
	err := o.err
	o.err = nil
	return err
}

// OnTimer drops the rows of the current key whose time to match is over:
// left rows at t-upper, right rows at t+lower.
func (o *intervalJoin) OnTimer(t int64, _ runtime.TimeDomain, out runtime.Output) error {
	if ls, ok := o.sides[left].Get(t - o.upper); ok && o.cfg.how.keepsLeft() {
		for i := range ls.list {
			if !ls.list[i].matched {
				if _, err := o.em.emit(&ls.list[i], nil, t, out); err != nil {
					return err
				}
			}
		}
	}
	o.remove(left, t-o.upper)
	o.remove(right, t+o.lower)
	return nil
}
