package window

// topOf picks, of one firing's results, those whose aggregate k is the
// greatest (ties all kept): the keepMax option. see every result of the
// firing first, then ask keeps of each.
//
// A subtask sees only its own keys, so at parallelism n it keeps each
// subtask's greatest. Every result it leaves out is below another result
// of the same window, so a maximum taken downstream, and a join of the
// results back to it (Nexmark q5), come out the same; the results that
// reach them are a handful per window instead of one per key. Flink's
// planner splits aggregates into local and global phases for the same
// reason.
type topOf struct {
	k  int
	ag aggregate
	// The greatest seen: an integer result in i (isInt), any other in v.
	i           int64
	v           any
	isInt, seen bool
	// mixed: two results could not be compared (a string and a number);
	// every result is kept rather than guess an order.
	mixed bool
}

// newTopOf is the topOf of config.keepMax (nil: none).
func newTopOf(aggs []aggregate, keepMax int) *topOf {
	if keepMax == 0 {
		return nil
	}
	return &topOf{k: keepMax - 1, ag: aggs[keepMax-1]}
}

func (t *topOf) reset() { *t = topOf{k: t.k, ag: t.ag} }

// value is a's result of aggregate k: integer results unboxed (a firing
// sees every key's; boxing each would allocate).
func (t *topOf) value(a *accum) (i int64, v any, isInt bool) {
	s := &a.Slots[t.k]
	switch {
	case t.ag.Func == aggCount && len(t.ag.Args) == 0:
		return a.Records, nil, true
	case t.ag.Func == aggCount:
		return s.N, nil, true
	case t.ag.Func == aggCountDistinct:
		return int64(len(s.Set)), nil, true
	case t.ag.Func == aggSum && s.N > 0 && !s.Float:
		return s.ISum, nil, true
	}
	return 0, a.Result(t.ag, t.k), false
}

// against compares a's result with the greatest seen (ok false: they
// cannot be compared). Integers compare as floats, as max() and the
// comparisons downstream do: 2^53 and 2^53+1 are a tie, both kept.
func (t *topOf) against(i int64, v any, isInt bool) (c int, ok bool) {
	if isInt && t.isInt {
		x, y := float64(i), float64(t.i)
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	x, y := v, t.v
	if isInt {
		x = i
	}
	if t.isInt {
		y = t.i
	}
	c, err := compare(x, y)
	return c, err == nil
}

// see takes a result into account; a null one (a sum of no values) never
// is the greatest.
func (t *topOf) see(a *accum) {
	i, v, isInt := t.value(a)
	if !isInt && v == nil {
		return
	}
	if t.seen {
		c, ok := t.against(i, v, isInt)
		if !ok {
			t.mixed = true
		}
		if !ok || c <= 0 {
			return
		}
	}
	t.i, t.v, t.isInt, t.seen = i, v, isInt, true
}

// keeps reports whether a's result is the greatest seen.
func (t *topOf) keeps(a *accum) bool {
	if t == nil || !t.seen || t.mixed {
		return true
	}
	i, v, isInt := t.value(a)
	if !isInt && v == nil {
		return false
	}
	c, ok := t.against(i, v, isInt)
	return !ok || c >= 0
}
