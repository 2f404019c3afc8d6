package planner

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/internal/sql/parser"
)

// Joins. A query whose FROM is `a [LEFT|RIGHT|FULL] JOIN b ON …` plans
// into one of the runtime's two joins (docs/joins.md), chosen by the
// condition, ON and WHERE together (for an outer join, see classify),
// split at its ANDs:
//
//   - an equality of the two inputs' window_start and of their window_end,
//     both inputs window aggregations of the same TUMBLE or HOP, or both
//     the rows of such window table functions: a windowJoin (Flink's
//     window join);
//   - bounds between the inputs' time attributes (a.t BETWEEN b.t -
//     INTERVAL … AND b.t + INTERVAL …, or <, <=, >, >=): an intervalJoin
//     (Flink's interval join);
//   - anything else is a regular join, which the runtime does not have
//     (it keeps both inputs for ever, or for a state TTL): refused.
//
// Either needs an equality of the two inputs (a.k = b.k): the join's key.
// A conjunct over one input only filters that input before the join; one
// over both is the join's where. Expressions are first written over
// placeholders naming an input's column, then each placeholder becomes
// the column's expression where it is used: over the input's records for
// its filter and key, over left./right. rows in the join's where and
// select (an input whose used columns are not plain members gets a map
// naming them first).

// placeholder marks input side's column i (and field f of a ROW column)
// in a join's expressions until they are written out.
var placeholder = regexp.MustCompile("\x01([LR])([0-9]+)(?:\\.([^\x01]*))?\x01")

func ph(side, i int, field string) string {
	s := "\x01" + "LR"[side:side+1] + strconv.Itoa(i)
	if field != "" {
		s += "." + field
	}
	return s + "\x01"
}

// joinInput is one input of a join being planned.
type joinInput struct {
	r    *rel
	name string // its qualifier: the alias, or the table's name
	base string // uid prefix of the operators planned for it
	side int    // 0 left, 1 right
	// ph is r's columns as placeholders, the scope of the join's
	// expressions.
	ph *scope
	// row: placeholder → expression over the join's row of this input
	// (left.x); key: → over the records the join reads (its key).
	row, key map[string]string
}

// ref is the column (and field) a placeholder names.
func (in *joinInput) ref(p string) column {
	m := placeholder.FindStringSubmatch(p)
	i, _ := strconv.Atoi(m[2])
	c := in.r.cols[i]
	if m[3] != "" {
		return c.fields[m[3]]
	}
	return c
}

// joinOut lets the sink's projection go into the join's select (Flink
// fuses a Calc into the join the same way): op is the join's index in
// pl.ops, exprs each result column over left and right rows.
type joinOut struct {
	op    int
	exprs []string
}

// sideName is what the join's expressions call an input: its alias, or
// the table it reads.
func sideName(f parser.TableRef) string {
	switch f := f.(type) {
	case *parser.TableName:
		return or(f.Alias, f.Name)
	case *parser.SubQuery:
		return f.Alias
	case *parser.WindowTVF:
		return f.Alias
	}
	return ""
}

// joinQuery plans SELECT items FROM a JOIN b ON cond [WHERE …].
func (pl *planner) joinQuery(s *parser.Select, j *parser.Join, base string, stmt parser.Pos) *rel {
	if _, ok := j.Left.(*parser.Join); ok {
		pl.errorf(j.P, "a join of more than two inputs is not supported yet (nor is a join over a view of a join: a join's result has no time attribute yet)")
		return nil
	}
	if len(s.GroupBy) > 0 || s.Having != nil {
		pos := s.P
		if len(s.GroupBy) > 0 {
			pos = s.GroupBy[0].At()
		}
		pl.errorf(pos, "an aggregation over a join is not supported yet (a join's result has no time attribute to window it by)")
		return nil
	}
	ins := pl.joinInputs(j, base, stmt)
	if ins == nil {
		return nil
	}
	sc := &scope{sides: []*scope{ins[0].ph, ins[1].ph}}
	mark := len(pl.errs)
	// A window table function's window_start and window_end resolve, as
	// markers, to be the window join's own (joinInputOps).
	pl.allowWindow = true
	c := pl.classify(conjuncts(j.On, nil), conjuncts(s.Where, nil), j.Kind, ins, sc)
	sel, names, types := pl.joinItems(s.Items, ins, sc)
	pl.allowWindow = false
	if len(pl.errs) > mark || c == nil {
		return nil
	}
	kind := pl.joinKind(j, c, ins)
	if kind == "" {
		return nil
	}
	opts, exprs := pl.joinOptions(kind, j.Kind, c, ins, sel, names, stmt)
	if kind == "windowJoin" && j.Kind == "INNER" {
		pl.keepMaxOnly(c, ins, opts)
	}
	uid := pl.add(op{uid: pl.uid(base + ".join"), typ: kind, opts: opts, origin: j.P})
	out := &rel{from: uid, join: &joinOut{op: len(pl.ops) - 1, exprs: exprs}}
	for i, n := range names {
		out.cols = append(out.cols, column{name: n, t: types[i], expr: member(n)})
	}
	return out
}

// joinInputs plans the join's two inputs, each with its placeholder
// scope; nil after an error.
func (pl *planner) joinInputs(j *parser.Join, base string, stmt parser.Pos) []*joinInput {
	ins := make([]*joinInput, 2)
	for i, f := range []parser.TableRef{j.Left, j.Right} {
		name := sideName(f)
		sub := base + "." + or(name, [2]string{"left", "right"}[i])
		r := pl.fromItem(f, sub, stmt)
		if r == nil {
			return nil
		}
		in := &joinInput{r: r, name: name, base: sub, side: i}
		in.ph = &scope{alias: name}
		for ci, c := range r.cols {
			pc := c
			pc.expr = ph(i, ci, "")
			if c.fields != nil {
				pc.fields = map[string]column{}
				for fn, fc := range c.fields {
					fc.expr = ph(i, ci, fn)
					pc.fields[fn] = fc
				}
			}
			in.ph.cols = append(in.ph.cols, pc)
		}
		ins[i] = in
	}
	if ins[0].name != "" && ins[0].name == ins[1].name {
		pl.errorf(j.Right.At(), "both inputs of the join are called %s: give one an alias (… JOIN %s AS x ON …)", ins[0].name, ins[1].name)
		return nil
	}
	return ins
}

// joinKind is the runtime join c plans into: windowJoin, intervalJoin,
// or "" (reported: no key, a regular join, an outer join the runtime's
// interval join does not have).
func (pl *planner) joinKind(j *parser.Join, c *joinCond, ins []*joinInput) string {
	if len(c.keys) == 0 && c.window != nil && !c.rows && c.ends {
		// Two window aggregations with no other equality (q5: each
		// window's counts against its maximum): keyed by the window.
		c.keys = append(c.keys, c.endKey)
	}
	switch {
	case c.window == nil && (ins[0].r.window != nil || ins[1].r.window != nil):
		pl.errorf(j.P, "the rows of a window table function join only in a window join: ON … AND %s.window_start = %s.window_start AND %s.window_end = %s.window_end",
			or(ins[0].name, "left"), or(ins[1].name, "right"), or(ins[0].name, "left"), or(ins[1].name, "right"))
	case len(c.keys) == 0:
		pl.errorf(j.P, "the join condition has no equality between the two inputs (%s.col = %s.col): a join pairs the rows of equal keys; without one every row would meet every other",
			or(ins[0].name, "left"), or(ins[1].name, "right"))
	case c.window != nil:
		return "windowJoin"
	case c.bounded() && (j.Kind == "RIGHT" || j.Kind == "FULL"):
		pl.errorf(j.P, "a %s OUTER interval join is not supported: the runtime's interval join keeps the rows of its left input only (write the inputs the other way round, as a LEFT JOIN)", j.Kind)
	case c.bounded():
		return "intervalJoin"
	default:
		pl.regularJoin(j, c, ins)
	}
	return ""
}

// joinOptions emits the inputs' filters (and maps) and writes the join's
// options; exprs are its select's expressions, over left and right rows.
func (pl *planner) joinOptions(kind, sqlKind string, c *joinCond, ins []*joinInput, sel, names []string, stmt parser.Pos) (opts [][2]string, exprs []string) {
	how := map[string]string{"INNER": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "full"}[sqlKind]
	used := append(append([]string(nil), sel...), c.where...)
	for i, in := range ins {
		keyExprs := make([]string, len(c.keys))
		for k, pair := range c.keys {
			keyExprs[k] = pair[i]
		}
		nullable := sqlKind == "FULL" || sqlKind == [2]string{"RIGHT", "LEFT"}[i]
		from := pl.joinInputOps(in, used, keyExprs, nullable, stmt)
		for k, x := range keyExprs {
			keyExprs[k] = substitute(x, in.key)
			if strings.Contains(keyExprs[k], "\x00") {
				pl.errorf(stmt, "a window join's key cannot be window_start, window_end or window_time: they are the window's, equal on both sides")
			}
		}
		key := keyExprs[0]
		if len(keyExprs) > 1 {
			key = "toJSON([" + strings.Join(keyExprs, ", ") + "])"
		}
		opts = append(opts, [2]string{[2]string{"left", "right"}[i], fmt.Sprintf("{from: %s, key: %s}", quote(from), quote(key))})
	}
	row := func(x string) string {
		return substitute(substitute(x, ins[0].row), ins[1].row)
	}
	switch {
	case kind == "windowJoin" && c.rows:
		// The table functions' rows: the join's own windows, the same.
		spec := fmt.Sprintf("{type: tumbling, size: %dms}", c.window.size)
		if c.window.kind == "HOP" {
			spec = fmt.Sprintf("{type: sliding, size: %dms, slide: %dms}", c.window.size, c.window.slide)
		}
		opts = append(opts, [2]string{"window", spec}, [2]string{"how", how})
	case kind == "windowJoin":
		// A window aggregation's results are stamped window_end - 1: a
		// tumbling window of the slide holds exactly the results of one
		// window of each input (for a HOP too, whose windows overlap).
		opts = append(opts, [2]string{"window", fmt.Sprintf("{type: tumbling, size: %dms}", or64(c.window.slide, c.window.size))}, [2]string{"how", how})
	default:
		// lo <= left.ts - right.ts <= hi is the runtime's
		// left.ts + lower <= right.ts <= left.ts + upper.
		opts = append(opts, [2]string{"lower", fmt.Sprintf("%dms", -c.hi)}, [2]string{"upper", fmt.Sprintf("%dms", -c.lo)})
		if how != "inner" { // the default, as the YAML specs leave it out
			opts = append(opts, [2]string{"how", how})
		}
	}
	if len(c.where) > 0 {
		w := ""
		for _, x := range c.where {
			w = and(w, row(x))
		}
		opts = append(opts, [2]string{"where", quote(w)})
	}
	members := make([]string, len(sel))
	for i, x := range sel {
		exprs = append(exprs, row(x))
		members[i] = quote(names[i]) + ": " + quote(exprs[i])
	}
	// select last: the sink's projection may replace it (insert).
	return append(opts, [2]string{"select", "{" + strings.Join(members, ", ") + "}"}), exprs
}

func or64(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}

// conjuncts appends e's ANDed conditions to to.
func conjuncts(e parser.Expr, to []parser.Expr) []parser.Expr {
	if e == nil {
		return to
	}
	if b, ok := e.(*parser.Binary); ok && b.Op == "AND" {
		return conjuncts(b.R, conjuncts(b.L, to))
	}
	return append(to, e)
}

// joinCond is a join condition sorted out.
type joinCond struct {
	keys  [][2]string // equal expressions: [left, right], as placeholders
	where []string    // conditions over both inputs, as placeholders
	// window: the inputs' window, when their window_start and window_end
	// are equal (starts, ends: which of the two were found).
	window       *windowTVF
	starts, ends bool
	// lo <= left.ts - right.ts <= hi (ms), with haveLo, haveHi.
	lo, hi         int64
	haveLo, haveHi bool
	// firstTime: the first condition over both inputs that compares
	// TIMESTAMPs without being a bound between time attributes.
	firstTime parser.Expr
	boundAt   parser.Pos
	// windowsDiffer: the inputs' windows differ (reported once).
	windowsDiffer bool
	// rows: the window join's inputs are window table functions' rows
	// (not aggregations).
	rows bool
	// endKey: the inputs' window_end columns (placeholders), equal.
	endKey [2]string
}

func (c *joinCond) bounded() bool { return c.haveLo && c.haveHi }

// classify sorts the join's conditions: a condition over one input filters
// it; an equality of the two inputs is a key; window_start and window_end
// equalities make a window join, bounds between time attributes an
// interval join; the rest is the join's where. nil after an error.
//
// In an outer join (kind LEFT, RIGHT or FULL) a row of a kept input
// that matches nothing is a result too, the other input's columns NULL:
// an ON condition over a kept input alone decides matches (the join's
// where), it does not filter the input; a WHERE condition filters
// results, so one over an input whose columns are never NULL filters
// that input, and one reading an input whose columns may be NULL is
// refused (so are keys and bounds in WHERE).
func (pl *planner) classify(on, where []parser.Expr, kind string, ins []*joinInput, sc *scope) *joinCond {
	c := &joinCond{}
	kept := [2]bool{kind == "LEFT" || kind == "FULL", kind == "RIGHT" || kind == "FULL"}
	var bounds []parser.Expr
	for n, e := range append(append([]parser.Expr(nil), on...), where...) {
		inWhere := n >= len(on)
		x, t := pl.tr(e, sc)
		if t.k != kBool && t.k != kAny {
			pl.errorf(e.At(), "a join condition must be true or false")
			continue
		}
		sides := sidesOf(x)
		// nullable: the input's columns are NULL in some results.
		if inWhere && (sides&1 != 0 && kept[1] || sides&2 != 0 && kept[0]) {
			pl.errorf(e.At(), "in a %s OUTER JOIN a WHERE condition may read only an input whose columns are never NULL (%s); write the join's keys, bounds and conditions over its other input in ON",
				kind, neverNull(kept, ins))
			continue
		}
		switch {
		case (sides == 1 || sides == 2) && !inWhere && kept[sides-1]:
			c.where = append(c.where, x) // decides matches, keeps the rows
			continue
		case sides == 1 || sides == 2:
			in := ins[sides-1]
			f := substitute(x, rawExprs(in))
			if strings.Contains(f, "\x00") {
				pl.errorf(e.At(), "a condition over window_start, window_end or window_time of one input of a window join is not supported yet")
				continue
			}
			in.r.filter = and(in.r.filter, f)
			continue
		case sides == 0:
			c.where = append(c.where, x)
			continue
		}
		if pl.windowEquality(e, ins, sc, c) {
			continue
		}
		if pl.isBound(e, ins, sc) {
			bounds = append(bounds, e)
			continue
		}
		if b, ok := e.(*parser.Binary); ok && b.Op == "=" {
			l, lt := pl.tr(b.L, sc)
			r, rt := pl.tr(b.R, sc)
			if sl, sr := sidesOf(l), sidesOf(r); sl|sr == 3 && comparable(lt, rt) != "" {
				pl.errorf(b.P, "this equality compares %s: CAST one side, as in CAST(x AS %s)", comparable(lt, rt), map[bool]string{true: "VARCHAR", false: "BIGINT"}[lt.k != kString])
				continue
			}
			if sl, sr := sidesOf(l), sidesOf(r); sl == 1 && sr == 2 {
				c.keys = append(c.keys, [2]string{l, r})
				continue
			} else if sl == 2 && sr == 1 {
				c.keys = append(c.keys, [2]string{r, l})
				continue
			}
		}
		if c.firstTime == nil && pl.comparesTimes(e, sc) {
			c.firstTime = e
		}
		c.where = append(c.where, x)
	}
	if c.window != nil {
		// A window join: time bounds are plain conditions of its where.
		for _, e := range bounds {
			x, _ := pl.tr(e, sc)
			c.where = append(c.where, x)
		}
		if !c.starts || !c.ends {
			missing := "window_end"
			if !c.starts {
				missing = "window_start"
			}
			pl.errorf(c.boundAt, "a window join needs both inputs' window_start and window_end equal (%s.window_start = %s.window_start AND %s.window_end = %s.window_end); the %s equality is missing",
				ins[0].name, ins[1].name, ins[0].name, ins[1].name, missing)
			return nil
		}
		return c
	}
	for _, e := range bounds {
		pl.addBound(e, ins, sc, c)
	}
	if len(bounds) > 0 && !c.bounded() {
		pl.errorf(bounds[0].At(), "this bounds the time between the join's inputs from one side only; an interval join needs both, as in %s BETWEEN %s - INTERVAL … AND %s + INTERVAL …",
			qualified(ins[0]), qualified(ins[1]), qualified(ins[1]))
		return nil
	}
	if c.bounded() && c.lo > c.hi {
		pl.errorf(bounds[0].At(), "the join's time bounds leave no row to match: %s - %s at least %d ms and at most %d ms", qualified(ins[0]), qualified(ins[1]), c.lo, c.hi)
		return nil
	}
	return c
}

// sidesOf is which inputs a placeholder expression reads: 0 none, 1 left
// only, 2 right only, 3 both.
func sidesOf(x string) int {
	n := 0
	if strings.Contains(x, "\x01L") {
		n |= 1
	}
	if strings.Contains(x, "\x01R") {
		n |= 2
	}
	return n
}

// rawExprs maps in's placeholders to its columns' expressions over the
// records of its operator (for its filter).
func rawExprs(in *joinInput) map[string]string {
	m := map[string]string{}
	for i, c := range in.r.cols {
		m[ph(in.side, i, "")] = c.expr
		for f, fc := range c.fields {
			m[ph(in.side, i, f)] = fc.expr
		}
	}
	return m
}

func substitute(x string, m map[string]string) string {
	return placeholder.ReplaceAllStringFunc(x, func(p string) string {
		if v, ok := m[p]; ok {
			return v
		}
		return p
	})
}

// quietly runs f, dropping the errors it reports; it reports whether
// there were any.
func (pl *planner) quietly(f func()) bool {
	mark := len(pl.errs)
	f()
	failed := len(pl.errs) > mark
	pl.errs = pl.errs[:mark]
	return failed
}

// column is the input and column an expression that is one column names.
func (pl *planner) columnOf(e parser.Expr, ins []*joinInput, sc *scope) (*joinInput, column, bool) {
	if _, ok := e.(*parser.Ident); !ok {
		return nil, column{}, false
	}
	var x string
	if pl.quietly(func() { x, _ = pl.tr(e, sc) }) {
		return nil, column{}, false
	}
	if !placeholder.MatchString(x) || placeholder.FindString(x) != x {
		return nil, column{}, false
	}
	in := ins[0]
	if x[1] == 'R' {
		in = ins[1]
	}
	return in, in.ref(x), true
}

// windowProperty is which window property column c of r is: "start" or
// "end" when r is a window aggregation's result and c its window_start or
// window_end.
func windowProperty(r *rel, c column) string {
	switch {
	case r.window != nil && !r.window.legacy:
		return map[string]string{"windowStart": "start", "windowEnd": "end"}[c.window]
	case r.winOut != nil && c.winProp != "":
		return c.winProp
	case r.winOut != nil:
		return map[string]string{"windowStart": "start", "windowEnd": "end"}[c.expr]
	}
	return ""
}

// windowOf is the window of r's rows (a window table function's, still
// pending) or of the aggregation r is the result of, and which.
func windowOf(r *rel) (w *windowTVF, rows bool) {
	if r.window != nil {
		return r.window, true
	}
	return r.winOut, false
}

// windowEquality records e when it is L.window_start = R.window_start (or
// the ends); it reports an equality of window properties that do not
// pair.
func (pl *planner) windowEquality(e parser.Expr, ins []*joinInput, sc *scope, c *joinCond) bool {
	b, ok := e.(*parser.Binary)
	if !ok || b.Op != "=" {
		return false
	}
	li, lc, ok1 := pl.columnOf(b.L, ins, sc)
	ri, rc, ok2 := pl.columnOf(b.R, ins, sc)
	if !ok1 || !ok2 || li == ri {
		return false
	}
	lp, rp := windowProperty(li.r, lc), windowProperty(ri.r, rc)
	if lp == "" || rp == "" {
		return false
	}
	if lp != rp {
		pl.errorf(b.P, "a window join equals window_start to window_start and window_end to window_end; this compares a window's %s with a window's %s", lp, rp)
		return true
	}
	lw, lrows := windowOf(li.r)
	rw, rrows := windowOf(ri.r)
	if lrows != rrows {
		pl.errorf(b.P, "a window join joins two window aggregations, or the rows of two window table functions, not one of each")
		return true
	}
	c.rows = lrows
	if lw.kind == "SESSION" || rw.kind == "SESSION" {
		pl.errorf(b.P, "a window join of SESSION windows is not supported yet (their windows differ per key); TUMBLE and HOP are")
		return true
	}
	if lw.kind != rw.kind || lw.size != rw.size || lw.slide != rw.slide {
		if c.windowsDiffer {
			return true // reported at the first equality
		}
		c.windowsDiffer = true
		pl.errorf(b.P, "a window join needs the same window on both inputs: %s is %s, %s is %s", li.name, windowText(lw), ri.name, windowText(rw))
		return true
	}
	if c.window == nil {
		c.boundAt = b.P
	}
	c.window = lw
	if lp == "start" {
		c.starts = true
		return true
	}
	c.ends = true
	var lx, rx string
	pl.quietly(func() { lx, _ = pl.tr(b.L, sc); rx, _ = pl.tr(b.R, sc) })
	if li.side == 1 {
		lx, rx = rx, lx
	}
	c.endKey = [2]string{lx, rx}
	return true
}

func windowText(w *windowTVF) string {
	if w.kind == "HOP" {
		return fmt.Sprintf("HOP(%d ms slide, %d ms size)", w.slide, w.size)
	}
	return fmt.Sprintf("%s(%d ms)", w.kind, w.size)
}

// timeRef reads e as an input's time attribute plus a constant: t,
// t + INTERVAL …, t - INTERVAL … (ms). A window aggregation's window_end
// is its result's time + 1 ms, its window_start that less the size.
func (pl *planner) timeRef(e parser.Expr, ins []*joinInput, sc *scope) (*joinInput, int64, bool) {
	if b, ok := e.(*parser.Binary); ok && (b.Op == "+" || b.Op == "-") {
		if iv, ok := b.R.(*parser.Interval); ok {
			in, off, ok := pl.timeRef(b.L, ins, sc)
			ms, err := intervalMillis(iv)
			if !ok || err != nil {
				return nil, 0, false
			}
			if b.Op == "-" {
				ms = -ms
			}
			return in, off + ms, true
		}
		if iv, ok := b.L.(*parser.Interval); ok && b.Op == "+" {
			in, off, ok := pl.timeRef(b.R, ins, sc)
			ms, err := intervalMillis(iv)
			if !ok || err != nil {
				return nil, 0, false
			}
			return in, off + ms, true
		}
		return nil, 0, false
	}
	in, c, ok := pl.columnOf(e, ins, sc)
	if !ok {
		return nil, 0, false
	}
	off, ok := timeOffset(in.r, c)
	return in, off, ok
}

// timeOffset: column c of r is r's records' time plus the offset.
func timeOffset(r *rel, c column) (int64, bool) {
	if r.rowtime != "" && c.name == r.rowtime && c.fields == nil {
		return 0, true
	}
	if r.winOut == nil {
		return 0, false
	}
	switch c.expr {
	case "(windowEnd - 1)":
		return 0, true
	case "windowEnd":
		return 1, true
	case "windowStart":
		if r.winOut.kind != "SESSION" {
			return 1 - r.winOut.size, true
		}
	}
	return 0, false
}

// isBound reports whether e bounds one input's time attribute by the
// other's: x BETWEEN lo AND hi, or a comparison.
func (pl *planner) isBound(e parser.Expr, ins []*joinInput, sc *scope) bool {
	refs := func(es ...parser.Expr) bool {
		var first *joinInput
		for i, x := range es {
			in, _, ok := pl.timeRef(x, ins, sc)
			if !ok {
				return false
			}
			if i == 0 {
				first = in
			} else if in == first {
				return false
			}
		}
		return true
	}
	switch e := e.(type) {
	case *parser.Between:
		return !e.Not && refs(e.X, e.Lo, e.Hi)
	case *parser.Binary:
		switch e.Op {
		case "<", "<=", ">", ">=", "=":
			return refs(e.L, e.R)
		}
	}
	return false
}

// addBound narrows c's bounds on left.ts - right.ts by e (isBound).
func (pl *planner) addBound(e parser.Expr, ins []*joinInput, sc *scope, c *joinCond) {
	// x op y, x and y time references: narrow by it.
	cmp := func(x parser.Expr, op string, y parser.Expr) {
		xi, xo, _ := pl.timeRef(x, ins, sc)
		_, yo, _ := pl.timeRef(y, ins, sc)
		// xi.ts + xo op yi.ts + yo, as left.ts - right.ts op d.
		d := yo - xo
		if xi.side == 1 {
			// right.ts + xo op left.ts + yo: left - right flips op.
			d = xo - yo
			op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
		}
		lower := func(v int64) {
			if !c.haveLo || v > c.lo {
				c.lo, c.haveLo = v, true
			}
		}
		upper := func(v int64) {
			if !c.haveHi || v < c.hi {
				c.hi, c.haveHi = v, true
			}
		}
		switch op {
		case ">=":
			lower(d)
		case ">": // times are whole milliseconds
			lower(d + 1)
		case "<=":
			upper(d)
		case "<":
			upper(d - 1)
		case "=":
			lower(d)
			upper(d)
		}
	}
	switch e := e.(type) {
	case *parser.Between:
		cmp(e.X, ">=", e.Lo)
		cmp(e.X, "<=", e.Hi)
	case *parser.Binary:
		cmp(e.L, e.Op, e.R)
	}
}

// comparesTimes reports whether e compares TIMESTAMPs (a BETWEEN or a
// comparison): a bound meant, perhaps, over a column that is not a time
// attribute.
func (pl *planner) comparesTimes(e parser.Expr, sc *scope) bool {
	var ops []parser.Expr
	switch e := e.(type) {
	case *parser.Between:
		ops = []parser.Expr{e.X, e.Lo, e.Hi}
	case *parser.Binary:
		if strings.Contains("< <= > >= =", e.Op) {
			ops = []parser.Expr{e.L, e.R}
		}
	}
	for _, o := range ops {
		var t typ
		pl.quietly(func() { _, t = pl.tr(o, sc) })
		if t.k == kTime {
			return true
		}
	}
	return false
}

// regularJoin reports a join with no time bound: the runtime has no
// regular join (one that keeps both inputs, for ever or for a state TTL).
func (pl *planner) regularJoin(j *parser.Join, c *joinCond, ins []*joinInput) {
	if e := c.firstTime; e != nil {
		at, what := e.At(), "a column"
		var ops []parser.Expr
		switch e := e.(type) {
		case *parser.Between:
			ops = []parser.Expr{e.X, e.Lo, e.Hi}
		case *parser.Binary:
			ops = []parser.Expr{e.L, e.R}
		}
		sc := &scope{sides: []*scope{ins[0].ph, ins[1].ph}}
		for _, o := range ops {
			if _, _, ok := pl.timeRef(o, ins, sc); !ok {
				at, what = o.At(), exprText(o)
				break
			}
		}
		pl.errorf(at, "%s is not a time attribute, so this does not bound the join in time; an interval join compares the inputs' time attributes (%s), as in %s BETWEEN %s - INTERVAL … AND %s + INTERVAL …",
			what, timeAttrs(ins), qualified(ins[0]), qualified(ins[1]), qualified(ins[1]))
		return
	}
	pl.errorf(j.P, "a regular join (one with no time bound between its inputs) is not supported: the runtime has no join that keeps both inputs (for ever, or for a state TTL); bound it in time, %s BETWEEN %s - INTERVAL … AND %s + INTERVAL … (an interval join), or join window aggregations on window_start and window_end (a window join)",
		qualified(ins[0]), qualified(ins[1]), qualified(ins[1]))
}

func qualified(in *joinInput) string {
	t := or(in.r.rowtime, "t")
	if in.name == "" {
		return t
	}
	return in.name + "." + t
}

func timeAttrs(ins []*joinInput) string {
	var parts []string
	for _, in := range ins {
		if in.r.rowtime == "" {
			parts = append(parts, or(in.name, "an input")+" has none")
		} else {
			parts = append(parts, qualified(in))
		}
	}
	return strings.Join(parts, ", ")
}

// exprText is a column reference as written, for messages.
func exprText(e parser.Expr) string {
	if id, ok := e.(*parser.Ident); ok {
		return strings.Join(id.Parts, ".")
	}
	return "this expression"
}

// joinItems translates a join's select list over both inputs (as
// placeholders), with its result columns' names (unique, as Flink makes
// them: a second id is id0) and types.
func (pl *planner) joinItems(items []parser.SelectItem, ins []*joinInput, sc *scope) ([]string, []string, []typ) {
	var exprs, names []string
	var types []typ
	seen := map[string]bool{}
	add := func(x, name string, t typ) {
		n := name
		for i := 0; seen[n]; i++ {
			n = fmt.Sprintf("%s%d", name, i)
		}
		seen[n] = true
		exprs, names, types = append(exprs, x), append(names, n), append(types, t)
	}
	for i, it := range items {
		if it.Expr == nil {
			var names []string
			found := false
			for _, in := range ins {
				names = append(names, in.name)
				found = found || it.Of == in.name
			}
			if it.Of != "" && !found {
				pl.errorf(it.P, "%s.*: the join's inputs are %s%s", it.Of, strings.Join(names, " and "), closest(it.Of, names))
				continue
			}
			for _, in := range ins {
				if it.Of != "" && it.Of != in.name {
					continue
				}
				for _, c := range in.ph.cols {
					if c.t.k == kRow {
						pl.errorf(it.P, "SELECT * over an input with ROW column %s is not supported yet: name the fields", c.name)
						continue
					}
					add(c.expr, c.name, c.t)
				}
			}
			continue
		}
		x, t := pl.tr(it.Expr, sc)
		name := it.Alias
		if id, ok := it.Expr.(*parser.Ident); ok && name == "" {
			name = id.Parts[len(id.Parts)-1]
		}
		if name == "" {
			name = fmt.Sprintf("EXPR$%d", i)
		}
		add(x, name, t)
	}
	return exprs, names, types
}

// rowExpr is x, an expression over an input's records, over the join's
// row of it (prefix left. or right.); "" when it is not one member.
func rowExpr(x, prefix string, windowResult bool) string {
	switch {
	case isIdent(x) && !reservedMembers[x]:
		return prefix + x
	case x == "(windowEnd - 1)":
		return "(" + prefix + "windowEnd - 1)"
	case windowResult && x == "key":
		// A window's result holds its key as a member too.
		return prefix + "key"
	case windowResult && x == "int(key)":
		return "int(" + prefix + "key)"
	}
	return ""
}

// joinInputOps emits in's filter and, when a column the join's where or
// select reads (in used) is not a plain member of its records, a map
// naming them. It sets in.row and in.key and returns the uid the join
// reads in from; nullable: in's columns are NULL in some results (an
// outer join's other input).
func (pl *planner) joinInputOps(in *joinInput, used, keys []string, nullable bool, stmt parser.Pos) string {
	from := pl.where(in.r, in.base, stmt)
	prefix := [2]string{"left.", "right."}[in.side]
	refs := map[string]bool{}
	for _, x := range used {
		for _, p := range placeholder.FindAllString(x, -1) {
			if p[1] == "LR"[in.side] {
				refs[p] = true
			}
		}
	}
	in.row, in.key = map[string]string{}, rawExprs(in)
	// winRow: read a window result's key off the join's row (int(key) of
	// a NULL row fails: a nullable input maps its key first).
	winRow := in.r.winOut != nil && !nullable
	direct := true
	for p := range refs {
		if c := in.ref(p); c.window != "" && in.r.window != nil {
			// A window table function's window_start, window_end and
			// window_time: the window join's own; NULL, as Flink has
			// them, in a result where this input is missing (its key is).
			w := map[string]string{"windowStart": "windowStart", "windowEnd": "windowEnd", "windowTime": "(windowEnd - 1)"}[c.window]
			if nullable {
				guard := ""
				if k := keys[0]; placeholder.FindString(k) == k {
					guard = rowExpr(in.ref(k).expr, prefix, winRow)
				}
				if guard == "" {
					pl.errorf(stmt, "in this outer window join, %s's %s is NULL where %s is missing, which is known only when its key is a column: select COALESCE(…) of both inputs' %s, or join on a column",
						or(in.name, "an input"), c.name, or(in.name, "the input"), c.name)
				}
				w = "(" + guard + " == nil ? nil : " + w + ")"
			}
			in.row[p] = w
			delete(refs, p)
		} else if rowExpr(c.expr, prefix, winRow) == "" {
			direct = false
		}
	}
	if direct {
		for p := range refs {
			in.row[p] = rowExpr(in.ref(p).expr, prefix, winRow)
		}
		return from
	}
	// A map: the used columns (and the keys' ones) as members.
	for _, k := range keys {
		for _, p := range placeholder.FindAllString(k, -1) {
			refs[p] = true
		}
	}
	ps := make([]string, 0, len(refs))
	for p := range refs {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	taken := map[string]bool{}
	var members []string
	for i, p := range ps {
		c := in.ref(p)
		m := c.name
		if !isIdent(m) || reservedMembers[m] || taken[m] {
			m = fmt.Sprintf("_c%d", i)
		}
		taken[m] = true
		members = append(members, objectKey(m)+": "+c.expr)
		in.row[p] = prefix + m
		in.key[p] = m
	}
	return pl.add(op{uid: pl.uid(in.base + ".project"), typ: "map", from: []string{from},
		opts: [][2]string{{"expr", quote("{" + strings.Join(members, ", ") + "}")}}, origin: stmt})
}

// sharePrefilters puts one filter, the OR of their conditions, before the
// filters that are all an operator's consumers (the two inputs of q8's
// join read persons and auctions off the nexmark table): each record then
// takes one test and, past it, goes on only when one of them may keep it,
// instead of going to both (the hand-written q8 drops the bids once the
// same way). Its uid is its first consumer's with ".any": a filter holds
// no state, so a uid it changes when the consumers do restores as before.
func (pl *planner) sharePrefilters() {
	consumers := map[string][]int{}
	for i, o := range pl.ops {
		for _, f := range o.from {
			consumers[f] = append(consumers[f], i)
		}
	}
	var ops []op
	for _, o := range pl.ops {
		c := consumers[o.uid]
		all := len(c) > 1
		for _, i := range c {
			all = all && pl.ops[i].typ == "filter" && len(pl.ops[i].from) == 1
		}
		ops = append(ops, o)
		if !all {
			continue
		}
		first := pl.ops[c[0]]
		var conds []string
		seen := map[string]bool{}
		for _, i := range c {
			x, _ := strconv.Unquote(pl.ops[i].opts[0][1])
			if !seen[x] {
				seen[x] = true
				conds = append(conds, paren(x))
			}
		}
		uid := pl.uid(first.uid + ".any")
		ops = append(ops, op{uid: uid, typ: "filter", from: []string{o.uid}, opts: [][2]string{{"expr", quote(strings.Join(conds, " || "))}}, origin: first.origin})
		for _, i := range c {
			pl.ops[i].from = []string{uid}
		}
	}
	pl.ops = ops
}

// comparable is "" when values of types a and b can be equal, else what
// they are ("text with a number"): a join key of text never equals one
// of numbers, and Flink refuses the comparison.
func comparable(a, b typ) string {
	known := func(t typ) bool { return t.k != kAny && t.k != kNull }
	if !known(a) || !known(b) || (a.k == kString) == (b.k == kString) {
		return ""
	}
	return kindName(a) + " with " + kindName(b)
}

// neverNull names the input of an outer join whose columns are never
// NULL: the one it keeps, when it keeps one only.
func neverNull(kept [2]bool, ins []*joinInput) string {
	for i, k := range kept {
		if k && !kept[1-i] {
			return "here " + or(ins[i].name, [2]string{"the left", "the right"}[i])
		}
	}
	return "in a FULL join, neither"
}

// keepMaxOnly: an inner window join whose only other condition is
// L.x >= R.m, where R is a window over L's own window aggregation W
// computing m = MAX(x) per window (q5: each auction's count against the
// window's highest), can only pair the rows of W whose x is their
// window's maximum: W then passes on only those (keepMax; per subtask
// the ones at its own maximum, among them the window's). The results are
// the same; the join and the maximum see a few rows per window instead
// of every key's. Nothing is changed unless W feeds only these two.
func (pl *planner) keepMaxOnly(c *joinCond, ins []*joinInput, opts [][2]string) {
	if len(c.where) != 1 || len(c.keys) != 1 || c.keys[0] != c.endKey {
		return // keyed by more than the window: a maximum per window is not the one
	}
	m := regexp.MustCompile("^\\(\x01L([0-9]+)\x01 >= \x01R([0-9]+)\x01\\)$").FindStringSubmatch(c.where[0])
	l, r := ins[0].r, ins[1].r
	if m == nil || l.filter != "" || r.filter != "" || l.winOut == nil || r.winOut == nil {
		return
	}
	li, _ := strconv.Atoi(m[1])
	ri, _ := strconv.Atoi(m[2])
	x, mx := l.cols[li].expr, r.cols[ri].expr
	w, v := pl.opIndex(l.from), pl.opIndex(r.from)
	if w < 0 || v < 0 || pl.ops[w].typ != "window" || pl.ops[v].typ != "window" || len(pl.ops[v].from) != 1 || pl.ops[v].from[0] != l.from || !isIdent(x) {
		return
	}
	if !strings.Contains(optValue(pl.ops[v].opts, "aggregate"), mx+": "+quote("max("+x+")")) || optValue(pl.ops[w].opts, "keepMax") != "" {
		return
	}
	consumers := 0
	for _, o := range pl.ops {
		for _, f := range o.from {
			if f == l.from {
				consumers++
			}
		}
	}
	// the join (not added yet) and v
	if consumers != 1 || !strings.Contains(opts[0][1], quote(l.from)) {
		return
	}
	pl.ops[w].opts = append(pl.ops[w].opts, [2]string{"keepMax", x})
}

func (pl *planner) opIndex(uid string) int {
	for i, o := range pl.ops {
		if o.uid == uid {
			return i
		}
	}
	return -1
}

func optValue(opts [][2]string, key string) string {
	for _, o := range opts {
		if o[0] == key {
			return o[1]
		}
	}
	return ""
}
