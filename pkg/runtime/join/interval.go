package join

import (
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// intervalJoin is one subtask of an interval join: left row l and right
// row r of one key match when l.ts+lower <= r.ts <= l.ts+upper (both
// bounds included, as in Flink). A row is matched against the other side's
// stored rows when it arrives, and kept, sorted by its timestamp, for as
// long as a row still to come could match it: a left row until the
// watermark reaches l.ts+upper, a right row until it reaches r.ts-lower
// (rows at or behind the watermark are late, so none can come after that).
// Each side of a key has one timer, at its first row's such time (rows
// are sorted by it); a firing drops what expired and schedules the next. In a left outer join a left row that matched
// nothing is then emitted with an empty right side, stamped l.ts+upper. A
// match is stamped with the later of its rows' times (or the timestamp
// expression).
type intervalJoin struct {
	base
	lower, upper int64
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
	k := o.current()
	l, lv := o.newRow(left, r.Timestamp, r)
	lo, hi := k.between(right, l.ts+o.lower, l.ts+o.upper)
	for i := lo; i < hi; i++ {
		rw := &k.sides[right][i]
		if err := o.match(&l, lv, rw, k.value(right, rw), out); err != nil {
			return err
		}
	}
	o.store(k, left, l, lv)
	o.reschedule(k)
	return nil
}

func (o *intervalJoin) ProcessElement2(r runtime.Record, out runtime.Output) error {
	if r.Timestamp <= o.ctx.CurrentWatermark() {
		o.dropLate(right, r, out)
		return nil
	}
	k := o.current()
	rw, rv := o.newRow(right, r.Timestamp, r)
	lo, hi := k.between(left, rw.ts-o.upper, rw.ts-o.lower)
	for i := lo; i < hi; i++ {
		l := &k.sides[left][i]
		if err := o.match(l, k.value(left, l), &rw, rv, out); err != nil {
			return err
		}
	}
	o.store(k, right, rw, rv)
	o.reschedule(k)
	return nil
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

// reschedule sets each side's timer to the side's earliest expiry: a left
// row's at l.ts+upper, a right row's at r.ts-lower. A side's timer is
// moved only when its first row changes, so the other side's rows coming
// and going cost no timer (q4: each bid's expiry would otherwise move the
// key's one timer off its auction's and back). A side's timer earlier than
// its expiry (one restored from a state with one timer per key) is kept:
// its firing reschedules.
func (o *intervalJoin) reschedule(k *keyState) {
	for s, rs := range k.sides {
		want := runtime.MinWatermark
		if len(rs) > 0 {
			want = o.expiry(s, rs[0].ts)
		}
		if cur := k.timers[s]; want == runtime.MinWatermark || cur == runtime.MinWatermark || want < cur {
			o.setTimer(k, s, want)
		}
	}
	o.dropIfEmpty(k)
}

// expiry is the time from which a row of side s at ts can match no row to
// come: the watermark at it, the rows it could match are late.
func (o *intervalJoin) expiry(s int, ts int64) int64 {
	if s == left {
		return ts + o.upper
	}
	return ts - o.lower
}

// OnTimer drops the current key's rows whose time to match is over (left
// rows with ts+upper <= t, right rows with ts-lower <= t), emitting the
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
	ls := k.sides[left]
	n := 0
	for n < len(ls) && ls[n].ts+o.upper <= t {
		if !ls[n].matched && o.cfg.how.keepsLeft() {
			if _, err := o.em.emit(k.value(left, &ls[n]), nil, false, ls[n].ts+o.upper, out); err != nil {
				return err
			}
		}
		n++
	}
	o.cut(k, left, 0, n)
	rs := k.sides[right]
	n = 0
	for n < len(rs) && rs[n].ts-o.lower <= t {
		n++
	}
	o.cut(k, right, 0, n)
	o.reschedule(k)
	return nil
}
