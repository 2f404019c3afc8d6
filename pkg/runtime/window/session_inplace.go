package window

import "github.com/flinkgo/flinkgo/pkg/runtime"

// extendSession adds a record to the key's one session in place when the
// record starts inside it (the session keeps its start, so its state entry
// stays where it is) and every aggregate gives the same result whatever
// order records are folded in. That is the common case (a key's records
// arrive in time order); addToSession then allocates no accumulator, no
// session and no map per record. done is false when the general merge must
// run; then nothing changed.
//
// Why the result is the same as the general path's: that one folds the
// record into a new accumulator and merges the session into it (record ⊕
// session), this one adds the record to the session (session ⊕ record).
// For count and countDistinct the two are equal; for sum and avg the
// integer parts are, and the float parts differ only in the operand order
// of one IEEE addition, which is commutative. first, last, min, max, maxBy
// and minBy break ties by which side comes first, so they take the
// general path (orderFree).
func (o *operator) extendSession(r runtime.Record, ts, wm int64, out runtime.Output) (done bool, err error) {
	if !o.cfg.orderFree || o.sessions.Len() != 1 || !addCannotFail(o.cfg.aggs, o.vals) {
		return false, nil
	}
	var start int64
	var s *session
	o.sessions.Range(func(st int64, v *session) bool {
		start, s = st, v
		return false
	})
	w := SessionWindow{Start: ts, End: ts + o.a.Gap}
	if ts < start || !w.Intersects(SessionWindow{Start: start, End: s.End}) {
		return false, nil
	}
	end := max(s.End, w.End) // MergeSessions of the one session and w
	if expired(end, wm, o.cfg.lateness) {
		o.dropLate(r, out)
		return true, nil
	}
	if err := s.Acc.Add(o.cfg.aggs, o.vals, ts); err != nil {
		return true, runtime.BadRecord(err) // not reached: addCannotFail
	}
	if end != s.End {
		o.unregisterSession(s.End)
		s.End = end
	}
	o.registerSession(start, end, s.Acc, wm, out)
	return true, nil
}

// orderFree reports whether every aggregate's result is independent of
// the order records and partial results are folded in (see extendSession).
func orderFree(aggs []aggregate) bool {
	for _, ag := range aggs {
		switch ag.Func {
		case aggCount, aggCountDistinct, aggSum, aggAvg:
		default:
			return false
		}
	}
	return true
}

// addCannotFail reports whether accum.Add of vals cannot fail (it would fail
// halfway, after changing the accumulator): sum and avg take numbers only.
func addCannotFail(aggs []aggregate, vals []any) bool {
	i := 0
	for _, ag := range aggs {
		if ag.Func == aggSum || ag.Func == aggAvg {
			switch vals[i].(type) {
			case nil, int, int64, float64:
			default:
				return false
			}
		}
		i += len(ag.Args)
	}
	return true
}
