package join

import (
	"fmt"
	"math"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// intervalJoin is one subtask of an interval join: left row l and right
// row r of one key match when l.ts+lower <= r.ts <= end(l) (both bounds
// included, as in Flink), where end(l) is l.ts+upper, or l's until value
// when that is sooner (an auction's expiry: each left row's own bound;
// see until). A row is matched against the other side's stored rows when
// it arrives, and kept, sorted by its timestamp, for as long as a row
// still to come could match it: a left row until the watermark reaches
// end(l), a right row until it reaches r.ts-lower (rows at or behind the
// watermark are late, so none can come after that). Each side of a key
// has one timer, at the earliest such time of its rows; a firing drops
// what expired and schedules the next. In a left outer join a left row
// that matched nothing is then emitted with an empty right side, stamped
// end(l). A match is stamped with the later of its rows' times (or the
// timestamp expression).
type intervalJoin struct {
	base
	lower, upper int64 // upper: unbounded when the spec gives only until
}

// unbounded is an upper bound that is none (until bounds every left row).
const unbounded = math.MaxInt64

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
	k := o.current()
	l, lv := o.newRow(left, r.Timestamp, r)
	if o.cfg.untilExpr >= 0 {
		u, err := o.untilOf(lv)
		if err != nil {
			return err
		}
		l.until = u
	}
	lo, hi := k.between(right, addSat(l.ts, o.lower), o.end(&l))
	for i := lo; i < hi; i++ {
		rw := &k.sides[right][i]
		if err := o.match(&l, lv, rw, k.value(right, rw), out); err != nil {
			return err
		}
	}
	o.store(k, left, l, lv)
	o.expireBy(k, left, o.end(&l))
	return nil
}

func (o *intervalJoin) ProcessElement2(r runtime.Record, out runtime.Output) error {
	if r.Timestamp <= o.ctx.CurrentWatermark() {
		o.dropLate(right, r, out)
		return nil
	}
	k := o.current()
	rw, rv := o.newRow(right, r.Timestamp, r)
	lo, hi := k.between(left, subSat(rw.ts, o.upper), subSat(rw.ts, o.lower))
	for i := lo; i < hi; i++ {
		l := &k.sides[left][i]
		if l.until < rw.ts {
			continue // after the left row's own end
		}
		if err := o.match(l, k.value(left, l), &rw, rv, out); err != nil {
			return err
		}
	}
	o.store(k, right, rw, rv)
	o.expireBy(k, right, subSat(rw.ts, o.lower))
	return nil
}

// untilOf is the until expression's value over left value lv: the time
// after which the row matches nothing (noUntil: it gave null).
func (o *intervalJoin) untilOf(lv []byte) (int64, error) {
	s := o.cfg.exprs
	if err := s.Load(lv, nil); err != nil {
		return 0, err
	}
	if o.em.usesKey {
		s.Bind("key", string(o.ctx.CurrentKey()))
	}
	v, err := s.Eval(o.cfg.untilExpr)
	if err != nil || v == nil {
		return noUntil, err
	}
	t, err := expr.Millis(v)
	if err != nil {
		return 0, fmt.Errorf("until expression: %w", err)
	}
	return t, nil
}

// end is the latest right time left row l matches: l.ts+upper, or its
// until if sooner.
func (o *intervalJoin) end(l *row) int64 { return min(addSat(l.ts, o.upper), l.until) }

// match emits the result of l and r, of values lv and rv (where
// permitting), and marks l matched.
func (o *intervalJoin) match(l *row, lv []byte, r *row, rv []byte, out runtime.Output) error {
	ok, err := o.em.emit(lv, rv, true, max(l.ts, r.ts), out)
	if ok {
		l.matched = true
	}
	return err
}

// expireBy makes side s's timer no later than t, the expiry of a row it
// just took. A side's timer is its rows' earliest expiry, so it moves only
// when a row expiring sooner comes (q4: each bid's expiry would otherwise
// move the key's one timer off its auction's and back). A side's timer
// earlier than any expiry (one restored from a state with one timer per
// key) is kept: its firing reschedules.
func (o *intervalJoin) expireBy(k *keyState, s int, t int64) {
	if cur := k.timers[s]; cur == runtime.MinWatermark || t < cur {
		o.setTimer(k, s, t)
	}
}

// reschedule sets each side's timer to its rows' earliest expiry (none
// when it has no rows), after a firing dropped what expired.
func (o *intervalJoin) reschedule(k *keyState) {
	for s, rs := range k.sides {
		want := runtime.MinWatermark
		switch {
		case len(rs) == 0:
		case s == left && o.cfg.untilExpr >= 0: // not in row order
			want = o.end(&rs[0])
			for i := 1; i < len(rs); i++ {
				want = min(want, o.end(&rs[i]))
			}
		case s == left:
			want = o.end(&rs[0])
		default:
			want = subSat(rs[0].ts, o.lower)
		}
		o.setTimer(k, s, want)
	}
	o.dropIfEmpty(k)
}

// OnTimer drops the current key's rows whose time to match is over (left
// rows with end <= t, right rows with ts-lower <= t), emitting the
// unmatched left rows of a left outer join.
func (o *intervalJoin) OnTimer(t int64, _ runtime.TimeDomain, out runtime.Output) error {
	k, ok := o.keys.Get()
	if !ok || (k.timers[left] != t && k.timers[right] != t) {
		return nil // not the key's timer (none is left behind; a guard)
	}
	for s := range k.timers {
		if k.timers[s] == t {
			k.timers[s] = runtime.MinWatermark // it fired
		}
	}
	perRow := o.cfg.untilExpr >= 0
	ls := k.sides[left]
	gone := 0 // without until, the expired rows are the first gone
	for i := range ls {
		e := o.end(&ls[i])
		if e > t {
			if perRow {
				continue
			}
			break
		}
		gone = i + 1
		if !ls[i].matched && o.cfg.how.keepsLeft() {
			if _, err := o.em.emit(k.value(left, &ls[i]), nil, false, e, out); err != nil {
				return err
			}
		}
	}
	if perRow {
		o.cutIf(k, left, func(l *row) bool { return o.end(l) <= t })
	} else {
		o.cut(k, left, 0, gone)
	}
	rs := k.sides[right]
	n := 0
	for n < len(rs) && subSat(rs[n].ts, o.lower) <= t {
		n++
	}
	o.cut(k, right, 0, n)
	o.reschedule(k)
	return nil
}

// addSat and subSat are a+b and a-b held within int64 (an unbounded upper
// is MaxInt64; b is never MinInt64).
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

func subSat(a, b int64) int64 { return addSat(a, -b) }
