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
// end(l), or l.ts if later (see expireLeft). A match is stamped with the
// later of its rows' times (or the timestamp expression).
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
	k, err := o.currentKey()
	if err != nil {
		return err
	}
	l, lv := o.newRow(left, r.Timestamp, r)
	if o.cfg.untilExpr >= 0 {
		if l.until, err = o.untilOf(lv); err != nil {
			return err
		}
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
	k, err := o.currentKey()
	if err != nil {
		return err
	}
	rw, rv := o.newRow(right, r.Timestamp, r)
	lo, hi := k.between(left, subSat(rw.ts, o.upper), subSat(rw.ts, o.lower))
	for i := lo; i < hi; i++ {
		l := &k.sides[left][i]
		if o.end(l) < rw.ts {
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

// currentKey is the current key's state (new and stored when it has
// none), with the until of every left row evaluated.
func (o *intervalJoin) currentKey() (*keyState, error) {
	k := o.current()
	return k, o.evalUnset(k)
}

// evalUnset evaluates until for k's left rows that have none evaluated:
// restored from a spec without until (or from state format 2 or 1), they
// end where this spec says, as if they had just come.
func (o *intervalJoin) evalUnset(k *keyState) error {
	if !k.unset {
		return nil
	}
	k.unset = false
	if o.cfg.untilExpr < 0 {
		return nil // end reads no until
	}
	ls := k.sides[left]
	for i := range ls {
		if ls[i].until != untilUnset {
			continue
		}
		u, err := o.untilOf(k.value(left, &ls[i]))
		if err != nil {
			return err
		}
		ls[i].until = u
		o.expireBy(k, left, o.end(&ls[i]))
	}
	return nil
}

// untilOf is the until expression's value over left value lv: the time
// after which the row matches nothing (untilNone: it gave null, which
// only an upper bound may allow: the row would be kept for ever).
func (o *intervalJoin) untilOf(lv []byte) (int64, error) {
	s := o.cfg.exprs
	if err := s.Load(lv, nil); err != nil {
		return 0, err
	}
	if o.em.usesKey {
		s.Bind("key", string(o.ctx.CurrentKey()))
	}
	v, err := s.Eval(o.cfg.untilExpr)
	if err != nil {
		return 0, err
	}
	if v == nil {
		if o.upper == unbounded {
			return 0, fmt.Errorf("until %q gave null for left row %s, and the join has no upper: the row would be kept for ever; "+
				"give upper too, or make until give a time", o.cfg.untilSrc, describeRow(lv))
		}
		return untilNone, nil
	}
	t, err := expr.Millis(v)
	if err != nil {
		return 0, fmt.Errorf("until %q %w, for left row %s", o.cfg.untilSrc, err, describeRow(lv))
	}
	return t, nil
}

// describeRow is v for an error message, cut short when long.
func describeRow(v []byte) string {
	if len(v) > 200 {
		return string(v[:200]) + "…"
	}
	return string(v)
}

// end is the latest right time left row l matches: l.ts+upper, or its
// until if sooner (a join with until evaluated it).
func (o *intervalJoin) end(l *row) int64 {
	if o.cfg.untilExpr < 0 {
		return addSat(l.ts, o.upper)
	}
	return min(addSat(l.ts, o.upper), l.until)
}

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

// OnTimer drops the current key's rows whose time to match is over (left
// rows with end <= t, right rows with ts-lower <= t), emitting the
// unmatched left rows of a left outer join. Only a side whose timer fired
// is looked at (a side's timer is its rows' earliest expiry), or one with
// rows and no timer (state format 1 had one timer per key).
func (o *intervalJoin) OnTimer(t int64, _ runtime.TimeDomain, out runtime.Output) error {
	k, ok := o.keys.Get()
	if !ok || (k.timers[left] != t && k.timers[right] != t) {
		return nil // not the key's timer (none is left behind; a guard)
	}
	var due [2]bool
	for s := range k.timers {
		due[s] = k.timers[s] == t || (k.timers[s] == runtime.MinWatermark && len(k.sides[s]) > 0)
		if k.timers[s] == t {
			k.timers[s] = runtime.MinWatermark // it fired
		}
	}
	if err := o.evalUnset(k); err != nil {
		return err
	}
	if due[left] {
		if err := o.expireLeft(k, t, out); err != nil {
			return err
		}
		o.setTimer(k, left, o.leftExpiry(k))
	}
	if due[right] {
		rs := k.sides[right]
		n := 0
		for n < len(rs) && subSat(rs[n].ts, o.lower) <= t {
			n++
		}
		o.cut(k, right, 0, n)
		next := runtime.MinWatermark
		if len(k.sides[right]) > 0 {
			next = subSat(k.sides[right][0].ts, o.lower)
		}
		o.setTimer(k, right, next)
	}
	o.dropIfEmpty(k)
	return nil
}

// expireLeft drops k's left rows whose end is at or before t, the time
// of the timer firing; a left outer join emits those that matched
// nothing, stamped t (a row's end, but for rows restored from another
// spec) or the row's own time if later: an end the watermark had passed
// when the row came (an until in the past, a negative upper) would make
// the result late downstream, the row's time never does (it was ahead of
// the watermark when it came, and the timer fires at the next advance).
func (o *intervalJoin) expireLeft(k *keyState, t int64, out runtime.Output) error {
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
			if _, err := o.em.emit(k.value(left, &ls[i]), nil, false, max(t, ls[i].ts), out); err != nil {
				return err
			}
		}
	}
	if perRow {
		o.cutIf(k, left, func(l *row) bool { return o.end(l) <= t })
	} else {
		o.cut(k, left, 0, gone)
	}
	return nil
}

// leftExpiry is the earliest end of k's left rows (MinWatermark: none):
// with until they do not end in row order.
func (o *intervalJoin) leftExpiry(k *keyState) int64 {
	ls := k.sides[left]
	if len(ls) == 0 {
		return runtime.MinWatermark
	}
	want := o.end(&ls[0])
	if o.cfg.untilExpr >= 0 {
		for i := 1; i < len(ls); i++ {
			want = min(want, o.end(&ls[i]))
		}
	}
	return want
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
