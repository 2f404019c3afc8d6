package planner

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/internal/sql/parser"
)

// kind is the little of SQL's type system the translation needs: which
// flinkgo (expr-lang) operation a SQL operator becomes, and where a
// DECIMAL result is rounded to its scale.
type kind int

const (
	kAny kind = iota
	kInt
	kFloat
	kDecimal
	kString
	kBool
	kTime // TIMESTAMP(3): epoch milliseconds in flinkgo records
	kInterval
	kNull
	kRow
)

type typ struct {
	k     kind
	scale int // kDecimal
}

func (t typ) numeric() bool {
	return t.k == kInt || t.k == kFloat || t.k == kDecimal || t.k == kAny || t.k == kTime || t.k == kInterval
}

// typeOf maps a declared SQL type.
func typeOf(t *parser.Type) (typ, error) {
	switch t.Name {
	case "BIGINT", "INT", "INTEGER", "SMALLINT", "TINYINT":
		return typ{k: kInt}, nil
	case "DOUBLE", "FLOAT", "REAL":
		return typ{k: kFloat}, nil
	case "DECIMAL", "DEC", "NUMERIC":
		s := 0
		if len(t.Args) > 1 {
			s = t.Args[1]
		}
		return typ{k: kDecimal, scale: s}, nil
	case "VARCHAR", "STRING", "CHAR":
		return typ{k: kString}, nil
	case "BOOLEAN":
		return typ{k: kBool}, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		return typ{k: kTime}, nil
	case "ROW":
		return typ{k: kRow}, nil
	}
	return typ{}, fmt.Errorf("type %s is not supported yet; BIGINT, INT, DOUBLE, DECIMAL(p, s), BOOLEAN, VARCHAR/STRING, TIMESTAMP(3) and ROW<…> are", t.Name)
}

// column is a column of a relation: its SQL name and type and the flinkgo
// expression that computes it from the records of the relation's operator.
type column struct {
	name string
	t    typ
	expr string
	// fields of a ROW column: name → (member expression, type). A nexmark
	// table's ROWs are the flat members of its records.
	fields map[string]column
	// window marks window_start/window_end/window_time of a window TVF:
	// usable only as the keys and results of its aggregation.
	window string
	// winProp: "start" or "end" for a window aggregation's result column
	// that is its window_start or window_end.
	winProp string
}

// scope is what names resolve against while translating an expression.
type scope struct {
	cols  []column
	alias string
	// grouped: a window aggregation's SELECT and HAVING.
	grouped *grouping
	// sides: a join's inputs (their alias and columns); a name resolves
	// in the one its qualifier names, or the one that has it.
	sides []*scope
}

// grouping collects a window aggregation's keys and aggregates.
type grouping struct {
	// legacy: GROUP BY TUMBLE(…): TUMBLE_START(…) and the like resolve.
	legacy bool
	in     *scope
	keys   []groupKey
	aggs   []agg
}

type groupKey struct {
	expr string // over the window's input records
	t    typ
	out  string // the window result's member
}

type agg struct {
	call string // flinkgo aggregate: count(), sum(price), …
	out  string
	t    typ
}

// tr translates e to a flinkgo expression and its type; problems go to
// pl.errs at e's position (the result is then "nil").
func (pl *planner) tr(e parser.Expr, sc *scope) (string, typ) {
	if g := sc.grouped; g != nil {
		if c, ok := e.(*parser.Call); ok && isAggregate(c.Name) {
			return pl.aggregate(c, g)
		}
		if c, ok := e.(*parser.Call); ok && g.legacy {
			if x, ok := groupWindowProperty(c.Name); ok {
				return x, typ{k: kTime}
			}
		}
		if !containsAggregate(e) {
			mark := len(pl.errs)
			pl.allowWindow = true
			s, _ := pl.tr(e, g.in)
			pl.allowWindow = false
			failed := len(pl.errs) > mark
			pl.errs = pl.errs[:mark]
			if !failed {
				for _, k := range g.keys {
					if k.expr == s {
						return k.out, k.t
					}
				}
			}
			if id, ok := e.(*parser.Ident); ok {
				if failed {
					return pl.tr(e, g.in) // report why it does not resolve
				}
				pl.errorf(id.P, "column %s is neither in GROUP BY nor inside an aggregate", strings.Join(id.Parts, "."))
				return "nil", typ{}
			}
		}
	}
	switch e := e.(type) {
	case *parser.Ident:
		return pl.ident(e, sc)
	case *parser.Literal:
		switch e.Kind {
		case "number":
			if i := strings.IndexByte(e.Text, '.'); i >= 0 {
				return e.Text, typ{k: kDecimal, scale: len(e.Text) - i - 1}
			}
			return e.Text, typ{k: kInt}
		case "string":
			return strconv.Quote(e.Text), typ{k: kString}
		case "bool":
			return strings.ToLower(e.Text), typ{k: kBool}
		}
		return "nil", typ{k: kNull}
	case *parser.Interval:
		ms, err := intervalMillis(e)
		if err != nil {
			pl.errorf(e.P, "%v", err)
		}
		return strconv.FormatInt(ms, 10), typ{k: kInterval}
	case *parser.Unary:
		x, t := pl.tr(e.X, sc)
		if e.Op == "NOT" {
			return "!" + paren(x), typ{k: kBool}
		}
		return "-" + paren(x), t
	case *parser.Binary:
		return pl.binary(e, sc)
	case *parser.Case:
		return pl.caseExpr(e, sc)
	case *parser.Cast:
		return pl.cast(e, sc)
	case *parser.In:
		x, _ := pl.tr(e.X, sc)
		items := make([]string, len(e.List))
		for i, it := range e.List {
			items[i], _ = pl.tr(it, sc)
		}
		s := paren(x) + " in [" + strings.Join(items, ", ") + "]"
		if e.Not {
			return "!(" + s + ")", typ{k: kBool}
		}
		return "(" + s + ")", typ{k: kBool}
	case *parser.Between:
		x, _ := pl.tr(e.X, sc)
		lo, _ := pl.tr(e.Lo, sc)
		hi, _ := pl.tr(e.Hi, sc)
		s := fmt.Sprintf("(%s >= %s && %s <= %s)", paren(x), paren(lo), paren(x), paren(hi))
		if e.Not {
			return "!" + s, typ{k: kBool}
		}
		return s, typ{k: kBool}
	case *parser.Like:
		return pl.like(e, sc)
	case *parser.IsNull:
		x, _ := pl.tr(e.X, sc)
		if e.Not {
			return "(" + paren(x) + " != nil)", typ{k: kBool}
		}
		return "(" + paren(x) + " == nil)", typ{k: kBool}
	case *parser.Call:
		return pl.call(e, sc)
	}
	pl.errorf(e.At(), "this expression is not supported yet")
	return "nil", typ{}
}

// sideIdent resolves e in the join input its qualifier names, or the one
// input that has such a column.
func (pl *planner) sideIdent(e *parser.Ident, sc *scope) (string, typ) {
	if len(e.Parts) > 1 {
		for _, s := range sc.sides {
			if s.alias != "" && s.alias == e.Parts[0] {
				return pl.ident(e, s)
			}
		}
	}
	var in []*scope
	var all []string
	for _, s := range sc.sides {
		for _, c := range s.cols {
			all = append(all, c.name)
			if c.name == e.Parts[0] {
				in = append(in, s)
				break
			}
		}
	}
	switch {
	case len(in) == 1:
		return pl.ident(e, in[0])
	case len(in) > 1:
		pl.errorf(e.P, "column %s is in both inputs of the join: qualify it (%s.%s or %s.%s)", e.Parts[0],
			or(in[0].alias, "left"), e.Parts[0], or(in[1].alias, "right"), e.Parts[0])
	case len(e.Parts) > 1:
		var q []string
		for _, s := range sc.sides {
			if s.alias != "" {
				q = append(q, s.alias)
			}
		}
		pl.errorf(e.P, "unknown column %s: the join's inputs are %s%s", strings.Join(e.Parts, "."), strings.Join(q, " and "), closest(e.Parts[0], q))
	default:
		pl.errorf(e.P, "unknown column %s%s", e.Parts[0], closest(e.Parts[0], all))
	}
	return "nil", typ{}
}

func (pl *planner) ident(e *parser.Ident, sc *scope) (string, typ) {
	if len(sc.sides) > 0 {
		return pl.sideIdent(e, sc)
	}
	parts := e.Parts
	if len(parts) > 1 && sc.alias != "" && parts[0] == sc.alias {
		parts = parts[1:]
	}
	var col *column
	for i := range sc.cols {
		if sc.cols[i].name == parts[0] {
			col = &sc.cols[i]
			break
		}
	}
	if col == nil {
		names := make([]string, 0, len(sc.cols))
		for _, c := range sc.cols {
			names = append(names, c.name)
		}
		pl.errorf(e.P, "unknown column %s%s", strings.Join(e.Parts, "."), closest(parts[0], names))
		return "nil", typ{}
	}
	if col.window != "" && !pl.allowWindow {
		pl.errorf(e.P, "%s can only be grouped by (GROUP BY window_start, window_end) in a window aggregation; other uses are not supported yet", col.name)
		return "nil", typ{}
	}
	if len(parts) == 1 {
		if col.t.k == kRow {
			pl.errorf(e.P, "column %s is a ROW: read its fields (%s.<field>); a whole ROW as a value is not supported yet", col.name, col.name)
			return "nil", typ{}
		}
		return col.expr, col.t
	}
	if col.t.k != kRow || len(parts) > 2 {
		pl.errorf(e.P, "%s has no field %s", strings.Join(parts[:len(parts)-1], "."), parts[len(parts)-1])
		return "nil", typ{}
	}
	f, ok := col.fields[parts[1]]
	if !ok {
		names := make([]string, 0, len(col.fields))
		for n := range col.fields {
			names = append(names, n)
		}
		sort.Strings(names)
		pl.errorf(e.P, "ROW %s has no field %s%s", col.name, parts[1], closest(parts[1], names))
		return "nil", typ{}
	}
	return f.expr, f.t
}

func (pl *planner) binary(e *parser.Binary, sc *scope) (string, typ) {
	l, lt := pl.tr(e.L, sc)
	r, rt := pl.tr(e.R, sc)
	switch e.Op {
	case "AND":
		return "(" + l + " && " + r + ")", typ{k: kBool}
	case "OR":
		return "(" + l + " || " + r + ")", typ{k: kBool}
	case "=", "<>", "<", "<=", ">", ">=":
		op := map[string]string{"=": "==", "<>": "!="}[e.Op]
		if op == "" {
			op = e.Op
		}
		return "(" + l + " " + op + " " + r + ")", typ{k: kBool}
	case "||":
		return "(" + l + " + " + r + ")", typ{k: kString}
	}
	if lt.k == kString || rt.k == kString {
		pl.errorf(e.P, "%s needs numbers; for text write || (concatenation)", e.Op)
		return "nil", typ{}
	}
	t := arith(e.Op, lt, rt)
	if e.Op == "/" && t.k == kInt {
		// SQL's integer division truncates; expr-lang's / is a float.
		return "int(" + l + " / " + r + ")", t
	}
	return "(" + l + " " + e.Op + " " + r + ")", t
}

// arith is the type of l op r as Flink types it (DECIMAL scales add under
// *, the larger one under + and -).
func arith(op string, l, r typ) typ {
	switch {
	case l.k == kTime || r.k == kTime:
		return typ{k: kTime}
	case l.k == kFloat || r.k == kFloat || l.k == kAny || r.k == kAny:
		return typ{k: kFloat}
	case l.k == kDecimal || r.k == kDecimal:
		if op == "/" {
			return typ{k: kFloat}
		}
		if op == "*" {
			return typ{k: kDecimal, scale: l.scale + r.scale}
		}
		return typ{k: kDecimal, scale: max(l.scale, r.scale)}
	}
	return typ{k: kInt}
}

func (pl *planner) caseExpr(e *parser.Case, sc *scope) (string, typ) {
	var op string
	if e.Operand != nil {
		op, _ = pl.tr(e.Operand, sc)
	}
	els, t := "nil", typ{k: kNull}
	if e.Else != nil {
		els, t = pl.tr(e.Else, sc)
	}
	out := els
	same := e.Else != nil
	for i := len(e.Whens) - 1; i >= 0; i-- {
		w := e.Whens[i]
		c, _ := pl.tr(w.Cond, sc)
		if e.Operand != nil {
			c = "(" + paren(op) + " == " + paren(c) + ")"
		}
		r, rt := pl.tr(w.Result, sc)
		if r != els {
			same = false
		}
		if t.k == kNull {
			t = rt
		}
		out = "(" + c + " ? " + r + " : " + out + ")"
	}
	if same {
		// Every branch computes the same member (a nexmark table's
		// dateTime is the dateTime of each kind of event): no test.
		return els, t
	}
	return out, t
}

func (pl *planner) cast(e *parser.Cast, sc *scope) (string, typ) {
	x, xt := pl.tr(e.X, sc)
	t, err := typeOf(e.Type)
	if err != nil {
		pl.errorf(e.Type.P, "%v", err)
		return "nil", typ{}
	}
	switch t.k {
	case kInt:
		return "int(" + x + ")", t
	case kFloat:
		return "float(" + x + ")", t
	case kDecimal:
		return fmt.Sprintf("round(float(%s), %d)", x, t.scale), t
	case kString:
		return "string(" + x + ")", t
	case kTime:
		if xt.k == kInt || xt.k == kTime {
			return x, t
		}
	}
	pl.errorf(e.P, "CAST to %s is not supported yet", e.Type.Name)
	return "nil", typ{}
}

func (pl *planner) like(e *parser.Like, sc *scope) (string, typ) {
	x, _ := pl.tr(e.X, sc)
	lit, ok := e.Pattern.(*parser.Literal)
	if !ok || lit.Kind != "string" {
		pl.errorf(e.Pattern.At(), "LIKE needs a string literal pattern")
		return "nil", typ{}
	}
	p := lit.Text
	core := strings.Trim(p, "%")
	var s string
	switch {
	case strings.ContainsAny(core, "%_\\"):
		var re strings.Builder
		re.WriteString("^")
		for _, r := range p {
			switch r {
			case '%':
				re.WriteString(".*")
			case '_':
				re.WriteString(".")
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString("$")
		s = paren(x) + " matches " + strconv.Quote(re.String())
	case strings.HasPrefix(p, "%") && strings.HasSuffix(p, "%") && len(p) >= 2:
		s = paren(x) + " contains " + strconv.Quote(core)
	case strings.HasPrefix(p, "%"):
		s = paren(x) + " endsWith " + strconv.Quote(core)
	case strings.HasSuffix(p, "%"):
		s = paren(x) + " startsWith " + strconv.Quote(core)
	default:
		s = paren(x) + " == " + strconv.Quote(core)
	}
	if e.Not {
		return "!(" + s + ")", typ{k: kBool}
	}
	return "(" + s + ")", typ{k: kBool}
}

// scalar functions: SQL name → flinkgo function, argument count (-1: any).
var scalars = map[string]struct {
	fn string
	n  int
	t  kind
}{
	"UPPER": {"upper", 1, kString}, "LOWER": {"lower", 1, kString}, "CHAR_LENGTH": {"len", 1, kInt},
	"CHARACTER_LENGTH": {"len", 1, kInt}, "ABS": {"abs", 1, kAny}, "FLOOR": {"floor", 1, kInt}, "CEIL": {"ceil", 1, kInt},
	"TRIM": {"trim", 1, kString},
}

func (pl *planner) call(e *parser.Call, sc *scope) (string, typ) {
	if isAggregate(e.Name) {
		pl.errorf(e.P, "aggregate %s outside a window aggregation: an unbounded aggregation (updating results) is not supported yet; aggregate over TABLE(TUMBLE(…)) or TABLE(HOP(…)) grouped by window_start, window_end", e.Name)
		return "nil", typ{}
	}
	if _, ok := groupWindowProperty(e.Name); ok {
		pl.errorf(e.P, "%s(…) is only defined in a query grouped by %s(…)", e.Name, e.Name[:strings.IndexByte(e.Name, '_')])
		return "nil", typ{}
	}
	args := make([]string, len(e.Args))
	types := make([]typ, len(e.Args))
	for i, a := range e.Args {
		args[i], types[i] = pl.tr(a, sc)
	}
	need := func(n int) bool {
		if len(args) != n {
			pl.errorf(e.P, "%s takes %d argument(s), got %d", e.Name, n, len(args))
			return false
		}
		return true
	}
	switch e.Name {
	case "MOD":
		if !need(2) {
			return "nil", typ{}
		}
		return "(" + args[0] + " % " + args[1] + ")", typ{k: kInt}
	case "ROUND":
		if len(args) == 1 {
			return "round(" + args[0] + ", 0)", typ{k: kDecimal}
		}
		if !need(2) {
			return "nil", typ{}
		}
		sc, _ := strconv.Atoi(args[1])
		return "round(" + args[0] + ", " + args[1] + ")", typ{k: kDecimal, scale: sc}
	case "CONCAT":
		return "(" + strings.Join(args, " + ") + ")", typ{k: kString}
	case "COALESCE":
		if len(args) == 0 {
			return "nil", typ{}
		}
		return "(" + strings.Join(args, " ?? ") + ")", types[0]
	case "PROCTIME", "NOW", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP":
		pl.errorf(e.P, "%s() (processing time) is not supported yet", e.Name)
		return "nil", typ{}
	}
	if f, ok := scalars[e.Name]; ok {
		if !need(f.n) {
			return "nil", typ{}
		}
		t := typ{k: f.t}
		if f.t == kAny {
			t = types[0]
		}
		return f.fn + "(" + strings.Join(args, ", ") + ")", t
	}
	names := []string{"MOD", "ROUND", "CONCAT", "COALESCE"}
	for n := range scalars {
		names = append(names, n)
	}
	sort.Strings(names)
	pl.errorf(e.P, "function %s is not supported yet%s (supported: %s, and COUNT, SUM, AVG, MIN, MAX in window aggregations)", e.Name, closest(e.Name, names), strings.Join(names, ", "))
	return "nil", typ{}
}

// groupWindowProperty is the window result member of TUMBLE_START(…),
// HOP_END(…), SESSION_ROWTIME(…) and the like.
func groupWindowProperty(name string) (string, bool) {
	for _, w := range []string{"TUMBLE_", "HOP_", "SESSION_"} {
		switch strings.TrimPrefix(name, w) {
		case "START":
			return "windowStart", strings.HasPrefix(name, w)
		case "END":
			return "windowEnd", strings.HasPrefix(name, w)
		case "ROWTIME":
			return "(windowEnd - 1)", strings.HasPrefix(name, w)
		}
	}
	return "", false
}

func isAggregate(name string) bool {
	switch name {
	case "COUNT", "SUM", "AVG", "MIN", "MAX":
		return true
	}
	return false
}

func containsAggregate(e parser.Expr) bool {
	found := false
	walk(e, func(x parser.Expr) {
		if c, ok := x.(*parser.Call); ok && isAggregate(c.Name) {
			found = true
		}
	})
	return found
}

func walk(e parser.Expr, f func(parser.Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch e := e.(type) {
	case *parser.Binary:
		walk(e.L, f)
		walk(e.R, f)
	case *parser.Unary:
		walk(e.X, f)
	case *parser.Call:
		for _, a := range e.Args {
			walk(a, f)
		}
	case *parser.Case:
		walk(e.Operand, f)
		for _, w := range e.Whens {
			walk(w.Cond, f)
			walk(w.Result, f)
		}
		walk(e.Else, f)
	case *parser.Cast:
		walk(e.X, f)
	case *parser.In:
		walk(e.X, f)
		for _, x := range e.List {
			walk(x, f)
		}
	case *parser.Between:
		walk(e.X, f)
		walk(e.Lo, f)
		walk(e.Hi, f)
	case *parser.Like:
		walk(e.X, f)
		walk(e.Pattern, f)
	case *parser.IsNull:
		walk(e.X, f)
	}
}

// aggregate registers a window aggregate and returns its result member.
func (pl *planner) aggregate(c *parser.Call, g *grouping) (string, typ) {
	var call string
	t := typ{k: kInt}
	switch {
	case c.Star && c.Name == "COUNT":
		call = "count()"
	case c.Star:
		pl.errorf(c.P, "%s(*) is not defined; only COUNT(*) is", c.Name)
		return "nil", typ{}
	case len(c.Args) != 1:
		pl.errorf(c.P, "%s takes one argument", c.Name)
		return "nil", typ{}
	default:
		if containsAggregate(c.Args[0]) {
			pl.errorf(c.P, "an aggregate inside an aggregate is not allowed")
			return "nil", typ{}
		}
		arg, at := pl.tr(c.Args[0], g.in)
		fn := strings.ToLower(c.Name)
		switch {
		case c.Distinct && c.Name == "COUNT":
			fn = "countDistinct"
		case c.Distinct:
			pl.errorf(c.P, "%s(DISTINCT …) is not supported yet; COUNT(DISTINCT …) is", c.Name)
		}
		call = fn + "(" + arg + ")"
		switch c.Name {
		case "SUM", "MIN", "MAX":
			t = at
		case "AVG":
			t = typ{k: kFloat}
			if at.k == kInt {
				t = typ{k: kInt} // Flink's AVG of a BIGINT is a BIGINT
			}
		}
	}
	for _, a := range g.aggs {
		if a.call == call {
			return a.out, a.t
		}
	}
	out := fmt.Sprintf("agg%d", len(g.aggs))
	g.aggs = append(g.aggs, agg{call: call, out: out, t: t})
	if c.Name == "AVG" && t.k == kInt {
		return "int(" + out + ")", t
	}
	return out, t
}

// paren wraps x unless it is already a single operand.
func paren(x string) string {
	if isSimple(x) {
		return x
	}
	return "(" + x + ")"
}

var simple = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.?]*|[0-9.]+|"([^"\\]|\\.)*")$`)

func isSimple(x string) bool {
	if simple.MatchString(x) {
		return true
	}
	// (…) as a whole
	if strings.HasPrefix(x, "(") && strings.HasSuffix(x, ")") {
		depth := 0
		for i, c := range x {
			switch c {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 && i != len(x)-1 {
					return false
				}
			}
		}
		return true
	}
	return false
}

// closest is ` (did you mean X?)` for the name nearest to n, or "".
func closest(n string, names []string) string {
	best, bestD := "", 3
	for _, c := range names {
		if d := distance(strings.ToLower(n), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// intervalMillis is an INTERVAL literal in milliseconds.
func intervalMillis(e *parser.Interval) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(e.Value), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("INTERVAL '%s' %s: the amount must be a whole number of %s", e.Value, e.Unit, strings.ToLower(e.Unit)+"s")
	}
	unit := map[string]int64{"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}[e.Unit]
	if n > (1<<53)/unit {
		return 0, fmt.Errorf("INTERVAL '%s' %s is too long", e.Value, e.Unit)
	}
	return n * unit, nil
}
