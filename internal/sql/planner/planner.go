// Package planner turns a parsed Flink SQL script into an ordinary flinkgo
// YAML job spec. The spec then goes through api.ParseJob and the engine's
// compile like any hand-written one, so a SQL job is an ordinary job: the
// same operators, checkpoints, savepoints, restarts and dashboard. Operator
// uids derive from the statement (the table a query inserts into, the
// source table's name), never from the statement's place in the script, so
// `stop` → `run -s` of the same script restores, and so does a script
// whose statements were reordered.
//
// Queries are fused as Flink's planner fuses Calc nodes: a view, a
// subquery, a WHERE and a SELECT over a table become one filter and one map
// over the source's records (SELECT … FROM bid, with bid a view over the
// nexmark table, is the hand-written spec's filter + map).
package planner

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/flinkgo/flinkgo/internal/sql/parser"
)

// Plan is a planned script.
type Plan struct {
	// Spec is the flinkgo job spec (YAML).
	Spec string
	// Origins[i] is where the statement that made operator i of Spec is.
	Origins []parser.Pos
	// With[i] maps operator i's options to the WITH options they came
	// from, for errors about their values.
	With []map[string]parser.Option
}

// Error is a planning problem at a place in the script.
type Error = parser.Error

// Errors are all the problems of a script.
type Errors = parser.Errors

// Compile parses and plans a script; name is the job's default name (the
// script's file name without extension). Errors lists every problem found.
func Compile(name, src string) (*Plan, error) {
	script, perrs := parser.Parse(src)
	pl := &planner{name: name, tables: map[string]*table{}, views: map[string]*parser.CreateView{},
		uids: map[string]bool{}, sources: map[string]string{}, parallelism: "1"}
	pl.errs = append(pl.errs, perrs...)
	pl.script(script)
	pl.sharePrefilters()
	if len(pl.errs) > 0 {
		sort.SliceStable(pl.errs, func(i, j int) bool {
			a, b := pl.errs[i].Pos, pl.errs[j].Pos
			return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
		})
		return nil, pl.errs
	}
	p := &Plan{Spec: pl.emit(), Origins: pl.origins()}
	for _, o := range pl.ops {
		p.With = append(p.With, o.with)
	}
	return p, nil
}

type planner struct {
	name        string
	errs        Errors
	tables      map[string]*table
	views       map[string]*parser.CreateView
	expanding   []string // views being expanded (cycles)
	settings    []setting
	parallelism string
	ops         []op
	uids        map[string]bool
	sources     map[string]string // table → its source operator's uid
	// allowWindow: window_start/window_end resolve (to markers matched
	// against a window aggregation's keys) instead of being refused.
	allowWindow bool
}

type setting struct{ key, value string }

// op is one operator of the spec: its uid, type, inputs and options as
// YAML flow text, in order, and the statement it came from.
type op struct {
	uid, typ string
	from     []string
	opts     [][2]string
	origin   parser.Pos
	with     map[string]parser.Option
	// stmt: the statement a shared operator (addShared) was planned for.
	stmt parser.Pos
}

func (pl *planner) errorf(p parser.Pos, format string, a ...any) {
	pl.errs = append(pl.errs, Error{Pos: p, Msg: fmt.Sprintf(format, a...)})
}

var uidUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// uid is a fresh uid made from base (the first is base itself, so adding
// a statement never renames the operators of another).
func (pl *planner) uid(base string) string {
	base = strings.Trim(uidUnsafe.ReplaceAllString(base, "_"), "_.-")
	if base == "" {
		base = "op"
	}
	if len(base) > 100 {
		base = base[:100]
	}
	u := base
	for i := 2; pl.uids[u]; i++ {
		u = fmt.Sprintf("%s-%d", base, i)
	}
	pl.uids[u] = true
	return u
}

func (pl *planner) add(o op) string {
	pl.ops = append(pl.ops, o)
	return o.uid
}

// addShared adds o, named base, unless the statement already has the
// same operator over the same input (q5 aggregates the bids by the same
// HOP twice, once for each input of its join): then it is that one.
// Only within a statement, so that a uid does not depend on the order of
// statements.
func (pl *planner) addShared(base string, o op) string {
	for _, e := range pl.ops {
		if e.typ == o.typ && e.stmt == o.stmt && strings.Join(e.from, "\x00") == strings.Join(o.from, "\x00") && fmt.Sprint(e.opts) == fmt.Sprint(o.opts) {
			return e.uid
		}
	}
	o.uid = pl.uid(base)
	return pl.add(o)
}

func (pl *planner) script(s *parser.Script) {
	var inserts []*parser.Insert
	for _, st := range s.Stmts {
		switch st := st.(type) {
		case *parser.Set:
			pl.set(st)
		case *parser.CreateTable:
			if pl.defined(st.Name, st.P) {
				pl.tables[st.Name] = pl.createTable(st)
			}
		case *parser.CreateView:
			if pl.defined(st.Name, st.P) {
				pl.views[st.Name] = st
			}
		case *parser.Insert:
			inserts = append(inserts, st)
		case *parser.StatementSet:
			inserts = append(inserts, st.Inserts...)
		}
	}
	// Tables and views first, then the INSERTs in order: a query's
	// operators are named after its sink table (t.where, t.project, t),
	// a source after its table, so the uids do not depend on where a
	// statement stands.
	for _, in := range inserts {
		pl.insert(in)
	}
	if len(inserts) == 0 && len(pl.errs) == 0 {
		pl.errorf(parser.Pos{Line: 1, Col: 1}, "the script has no INSERT INTO: nothing to run")
	}
}

func (pl *planner) defined(name string, p parser.Pos) bool {
	if pl.tables[name] != nil || pl.views[name] != nil {
		pl.errorf(p, "%s is defined twice", name)
		return false
	}
	return true
}

// set applies SET 'key' = 'value' for the keys a job spec has.
func (pl *planner) set(s *parser.Set) {
	switch s.Key {
	case "execution.checkpointing.interval", "execution.checkpointing.mode", "pipeline.name":
		pl.settings = append(pl.settings, setting{s.Key, s.Value})
	case "parallelism.default":
		if !regexp.MustCompile(`^[1-9][0-9]{0,5}$`).MatchString(s.Value) {
			pl.errorf(s.P, "SET 'parallelism.default': %q is not a positive whole number", s.Value)
			return
		}
		pl.parallelism = s.Value
	default:
		pl.errorf(s.P, "SET '%s' is not supported; the keys flinkgo reads are execution.checkpointing.interval, execution.checkpointing.mode, parallelism.default and pipeline.name%s",
			s.Key, closest(s.Key, []string{"execution.checkpointing.interval", "execution.checkpointing.mode", "parallelism.default", "pipeline.name"}))
	}
}

// rel is a query's result not yet written as operators: its columns as
// expressions over the records of operator from, and the filter those
// records still have to pass. Nothing is emitted until a window or a sink
// needs it, so chains of views and subqueries fuse.
type rel struct {
	from    string // uid
	tbl     *table // the source table, while from is its source
	cols    []column
	filter  string
	rowtime string // the time attribute column (records' timestamps), "" none
	window  *windowTVF
	alias   string
	// winOut: from is this window aggregation's result (its window_end
	// is the records' time + 1 ms: joins bound by it).
	winOut *windowTVF
	// join: from is a join whose select may still take the sink's
	// projection.
	join *joinOut
}

type windowTVF struct {
	kind        string // TUMBLE, HOP, SESSION
	size, slide int64  // ms; a session's gap is its size
	p           parser.Pos
	// legacy: GROUP BY TUMBLE(col, …) rather than a window TVF.
	legacy bool
	// partition: a SESSION TVF's PARTITION BY columns (its sessions are
	// per key, so they must be the aggregation's keys).
	partition  []string
	partitionP parser.Pos
	// inner: this is a window over the results of a window aggregation
	// of window inner, grouped by inner's window_start and window_end (q5's
	// MaxBids): a tumbling window of inner's slide holds exactly the
	// results of one of inner's windows.
	inner *windowTVF
}

// groupWindow finds a legacy group window, GROUP BY TUMBLE(col, size),
// HOP(col, slide, size) or SESSION(col, gap), among s's keys (nil: none,
// or one that was reported).
func (pl *planner) groupWindow(s *parser.Select, in *rel) *windowTVF {
	var found *windowTVF
	for _, e := range s.GroupBy {
		c, ok := e.(*parser.Call)
		if !ok {
			continue
		}
		want := map[string]int{"TUMBLE": 2, "HOP": 3, "SESSION": 2}[c.Name]
		if want == 0 {
			continue
		}
		if found != nil {
			pl.errorf(c.P, "a query has one group window")
			return nil
		}
		if len(c.Args) != want {
			pl.errorf(c.P, "%s takes the time attribute and %d interval(s)", c.Name, want-1)
			return nil
		}
		id, ok := c.Args[0].(*parser.Ident)
		if !ok || in.rowtime == "" || id.Parts[len(id.Parts)-1] != in.rowtime {
			pl.errorf(c.Args[0].At(), "%s(…)'s first argument must be the time attribute of its input (%s)", c.Name, or(in.rowtime, "it has none: declare WATERMARK FOR a column"))
			return nil
		}
		ms := make([]int64, 0, 2)
		for _, a := range c.Args[1:] {
			iv, ok := a.(*parser.Interval)
			if !ok {
				pl.errorf(a.At(), "%s needs INTERVAL literals (INTERVAL '10' SECOND)", c.Name)
				return nil
			}
			v, err := intervalMillis(iv)
			if err != nil || v == 0 {
				pl.errorf(a.At(), "a window's size, slide and gap must be positive intervals")
				return nil
			}
			ms = append(ms, v)
		}
		found = &windowTVF{kind: c.Name, size: ms[0], p: c.P, legacy: true}
		if c.Name == "HOP" {
			found.slide, found.size = ms[0], ms[1]
		}
	}
	return found
}

// samePartition reports whether the group keys other than the window's
// columns are exactly the columns partition names, in any order.
func samePartition(partition []string, groupBy []parser.Expr) bool {
	want := map[string]bool{}
	for _, p := range partition {
		want[p] = true
	}
	n := 0
	for _, e := range groupBy {
		id, ok := e.(*parser.Ident)
		if !ok {
			return false
		}
		name := id.Parts[len(id.Parts)-1]
		if name == "window_start" || name == "window_end" || name == "window_time" {
			continue
		}
		if !want[name] {
			return false
		}
		n++
	}
	return n == len(want)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (pl *planner) insert(in *parser.Insert) {
	t := pl.tables[in.Table]
	if t == nil {
		pl.errorf(in.P, "INSERT INTO %s: no such table%s", in.Table, closest(in.Table, pl.tableNames()))
		return
	}
	if !t.conn.sink {
		pl.errorf(in.P, "INSERT INTO %s: connector %s is a source only", in.Table, t.conn.name)
		return
	}
	base := in.Table
	r := pl.query(in.Query, base, in.P)
	if r == nil {
		return
	}
	if r.window != nil {
		pl.errorf(in.Query.P, "the rows of a window table function go into a window aggregation (GROUP BY window_start, window_end) or a window join; as they are, they are not supported yet")
		return
	}
	phys := t.physical()
	if len(r.cols) != len(phys) {
		pl.errorf(in.Query.P, "INSERT INTO %s: the query has %d columns, the table %d (%s)", in.Table, len(r.cols), len(phys), names(phys))
		return
	}
	for i, c := range phys {
		if !assignable(r.cols[i].t, c.t) {
			pl.errorf(in.Query.Items[min(i, len(in.Query.Items)-1)].P, "INSERT INTO %s: column %s is %s, the query's column %d (%s) is %s: CAST it",
				in.Table, c.name, kindName(c.t), i+1, r.cols[i].name, kindName(r.cols[i].t))
			return
		}
	}
	if j := r.join; j != nil && r.filter == "" {
		// The sink's columns straight from the join's select.
		sel := make([]string, len(phys))
		for i, c := range phys {
			sel[i] = quote(c.name) + ": " + quote(outputExpr(column{expr: j.exprs[i], t: r.cols[i].t}, c))
		}
		o := &pl.ops[j.op]
		o.opts[len(o.opts)-1] = [2]string{"select", "{" + strings.Join(sel, ", ") + "}"}
		pl.add(op{uid: pl.uid(base), typ: t.conn.sinkType, from: []string{r.from}, opts: t.conn.sinkOpts, origin: in.P, with: t.conn.with})
		return
	}
	members := make([]string, len(phys))
	for i, c := range phys {
		members[i] = objectKey(c.name) + ": " + outputExpr(r.cols[i], c)
	}
	from := pl.where(r, base, in.P)
	from = pl.add(op{uid: pl.uid(base + ".project"), typ: "map", from: []string{from},
		opts: [][2]string{{"expr", quote("{" + strings.Join(members, ", ") + "}")}}, origin: in.P})
	pl.add(op{uid: pl.uid(base), typ: t.conn.sinkType, from: []string{from}, opts: t.conn.sinkOpts, origin: in.P, with: t.conn.with})
}

// assignable reports whether a value of type v may be written into a
// column of type col without a CAST (Flink refuses text into a number
// and the other way round).
func assignable(v, col typ) bool {
	if v.k == kAny || v.k == kNull || col.k == kAny {
		return true
	}
	switch col.k {
	case kString:
		return v.k == kString
	case kBool:
		return v.k == kBool
	case kTime:
		return v.k == kTime || v.k == kInt
	case kRow:
		return false
	}
	return v.numeric()
}

func kindName(t typ) string {
	return map[kind]string{kInt: "an integer", kFloat: "a DOUBLE", kDecimal: "a DECIMAL", kString: "text", kBool: "a BOOLEAN",
		kTime: "a TIMESTAMP", kInterval: "an INTERVAL", kRow: "a ROW"}[t.k]
}

// outputExpr is a query column written into a sink column: a DECIMAL
// rounded to its scale, as SQL's exact arithmetic and CAST to
// DECIMAL(p, s) give it (0.908 * 15 is 13.620, not 13.620000000000001).
func outputExpr(q, sink column) string {
	scale := -1
	switch {
	case q.t.k == kDecimal && sink.t.k == kDecimal:
		scale = min(q.t.scale, sink.t.scale)
	case q.t.k == kDecimal:
		scale = q.t.scale
	case q.t.k == kFloat && sink.t.k == kDecimal:
		scale = sink.t.scale
	}
	if scale >= 0 && !strings.HasPrefix(q.expr, "round(") {
		return fmt.Sprintf("round(%s, %d)", q.expr, scale)
	}
	return q.expr
}

// where emits r's pending filter (if any) and returns the uid its records
// come from.
func (pl *planner) where(r *rel, base string, p parser.Pos) string {
	if r.filter == "" {
		return r.from
	}
	for _, o := range pl.ops {
		// The same filter of the same records in one statement (both
		// inputs of a join reading the view bid): one operator.
		if o.typ == "filter" && o.origin == p && len(o.from) == 1 && o.from[0] == r.from && o.opts[0][1] == quote(r.filter) {
			return o.uid
		}
	}
	return pl.add(op{uid: pl.uid(base + ".where"), typ: "filter", from: []string{r.from},
		opts: [][2]string{{"expr", quote(r.filter)}}, origin: p})
}

// query plans a SELECT into a rel; nil after an error.
func (pl *planner) query(s *parser.Select, base string, stmt parser.Pos) *rel {
	if j, ok := s.From.(*parser.Join); ok {
		return pl.joinQuery(s, j, base, stmt)
	}
	in := pl.fromItem(s.From, base, stmt)
	if in == nil {
		return nil
	}
	if in.window != nil {
		if len(s.GroupBy) == 0 && s.Having == nil && !in.window.legacy && !selectsAggregate(s.Items) {
			return pl.windowRows(s, in)
		}
		return pl.windowAggregate(s, in, base, stmt)
	}
	mark := len(pl.errs)
	if w := pl.groupWindow(s, in); w != nil {
		// The legacy GROUP BY TUMBLE/HOP/SESSION(col, …): the window
		// aggregation over it, TUMBLE_START(…) and the like its
		// window_start and window_end.
		in.window = w
		return pl.windowAggregate(s, in, base, stmt)
	}
	if len(pl.errs) > mark {
		return nil // a group window that was reported
	}
	if len(s.GroupBy) > 0 && in.winOut != nil {
		if c := pl.windowCascade(s, in); c != nil {
			return pl.windowAggregate(s, c, base, stmt)
		}
	}
	if len(s.GroupBy) > 0 {
		pl.errorf(s.GroupBy[0].At(), "GROUP BY without a window (an unbounded aggregation, updating results) is not supported yet: aggregate over TABLE(TUMBLE(…)) or TABLE(HOP(…)) and group by window_start, window_end")
		return nil
	}
	if s.Having != nil {
		pl.errorf(s.Having.At(), "HAVING without GROUP BY is not supported")
		return nil
	}
	sc := &scope{cols: in.cols, alias: in.alias}
	out := &rel{from: in.from, tbl: in.tbl, filter: in.filter, winOut: in.winOut}
	if s.Where != nil {
		w, t := pl.tr(s.Where, sc)
		if t.k != kBool && t.k != kAny {
			pl.errorf(s.Where.At(), "WHERE needs a condition (true or false)")
		}
		out.filter = and(in.filter, w)
	}
	out.cols = pl.items(s.Items, sc, in, out)
	return out
}

// items translates the select list over sc; a bare reference to in's
// time attribute keeps it one in the result.
func (pl *planner) items(items []parser.SelectItem, sc *scope, in, out *rel) []column {
	var cols []column
	for i, it := range items {
		if it.Expr == nil && it.Of != "" && it.Of != sc.alias {
			pl.errorf(it.P, "%s.*: the query reads no input called %s%s", it.Of, it.Of, closest(it.Of, []string{sc.alias}))
			continue
		}
		if it.Expr == nil {
			for _, c := range in.cols {
				if c.t.k == kRow {
					pl.errorf(it.P, "SELECT * over a table with ROW column %s is not supported yet: name the fields", c.name)
					continue
				}
				if c.window != "" && out.window == nil {
					continue
				}
				cols = append(cols, c)
				if c.name == in.rowtime {
					out.rowtime = c.name
				}
			}
			continue
		}
		x, t := pl.tr(it.Expr, sc)
		name := it.Alias
		if id, ok := it.Expr.(*parser.Ident); ok {
			if name == "" {
				name = id.Parts[len(id.Parts)-1]
			}
			if len(id.Parts) == 1 && id.Parts[0] == in.rowtime && sc.grouped == nil {
				out.rowtime = name
			}
		}
		if name == "" {
			name = fmt.Sprintf("EXPR$%d", i)
		}
		cols = append(cols, column{name: name, t: t, expr: x})
	}
	return cols
}

// windowRows plans SELECT … FROM TABLE(TUMBLE|HOP(…)) without an
// aggregation: the table function's rows, their window still pending
// (their window_start and window_end are markers), for a window join or
// an aggregation over them.
func (pl *planner) windowRows(s *parser.Select, in *rel) *rel {
	sc := &scope{cols: in.cols, alias: in.alias}
	out := &rel{from: in.from, tbl: in.tbl, filter: in.filter, window: in.window}
	pl.allowWindow = true
	defer func() { pl.allowWindow = false }()
	if s.Where != nil {
		w, _ := pl.tr(s.Where, sc)
		if strings.Contains(w, "\x00") {
			pl.errorf(s.Where.At(), "a condition on window_start, window_end or window_time of a window table function's rows is not supported yet")
			return nil
		}
		out.filter = and(in.filter, w)
	}
	out.cols = pl.items(s.Items, sc, in, out)
	for i := range out.cols {
		c := &out.cols[i]
		if strings.HasPrefix(c.expr, "\x00") {
			// a window column, renamed or not, stays one
			c.window = map[string]string{"\x00window_start": "windowStart", "\x00window_end": "windowEnd", "\x00window_time": "windowTime"}[c.expr]
		} else if strings.Contains(c.expr, "\x00") {
			pl.errorf(s.Items[min(i, len(s.Items)-1)].P, "an expression over window_start, window_end or window_time of a window table function's rows is not supported yet: select the column")
			return nil
		}
	}
	return out
}

// selectsAggregate reports whether a select list holds an aggregate.
func selectsAggregate(items []parser.SelectItem) bool {
	for _, it := range items {
		if containsAggregate(it.Expr) {
			return true
		}
	}
	return false
}

func and(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return "(" + a + " && " + b + ")"
}

func (pl *planner) fromItem(f parser.TableRef, base string, stmt parser.Pos) *rel {
	switch f := f.(type) {
	case *parser.TableName:
		r := pl.named(f.Name, f.P, base, stmt)
		if r != nil && f.Alias != "" {
			r.alias = f.Alias
		}
		return r
	case *parser.SubQuery:
		r := pl.query(f.Query, base, stmt)
		if r != nil {
			r.alias = f.Alias
		}
		return r
	case *parser.WindowTVF:
		return pl.window(f, base, stmt)
	}
	pl.errorf(f.At(), "this FROM is not supported yet")
	return nil
}

// named is the rel of a table (its source) or a view (its query, inlined).
func (pl *planner) named(name string, p parser.Pos, base string, stmt parser.Pos) *rel {
	if t := pl.tables[name]; t != nil {
		if !t.conn.source {
			pl.errorf(p, "table %s: connector %s cannot be read (it is a sink only)", name, t.conn.name)
			return nil
		}
		uid, ok := pl.sources[name]
		if !ok {
			uid = pl.uid(name)
			pl.sources[name] = uid
			pl.add(op{uid: uid, typ: t.conn.sourceType, opts: t.sourceOpts(), origin: t.p, with: t.conn.with})
		}
		return &rel{from: uid, tbl: t, cols: append([]column(nil), t.cols...), rowtime: t.rowtime}
	}
	if v := pl.views[name]; v != nil {
		for _, e := range pl.expanding {
			if e == name {
				pl.errorf(p, "view %s refers to itself", name)
				return nil
			}
		}
		pl.expanding = append(pl.expanding, name)
		defer func() { pl.expanding = pl.expanding[:len(pl.expanding)-1] }()
		return pl.query(v.Query, base, stmt)
	}
	pl.errorf(p, "no table or view %s%s", name, closest(name, pl.tableNames()))
	return nil
}

func (pl *planner) tableNames() []string {
	var n []string
	for k := range pl.tables {
		n = append(n, k)
	}
	for k := range pl.views {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// window plans TABLE(TUMBLE|HOP(TABLE t, DESCRIPTOR(c), …)): t's columns
// and window_start, window_end, window_time, pending a GROUP BY.
func (pl *planner) window(w *parser.WindowTVF, base string, stmt parser.Pos) *rel {
	in := pl.fromItem(w.Input, base, stmt)
	if in == nil {
		return nil
	}
	if in.window != nil {
		pl.errorf(w.P, "a window over a window is not supported yet")
		return nil
	}
	if in.rowtime == "" || w.Descriptor != in.rowtime {
		what := "it has no time attribute (declare WATERMARK FOR a column in its CREATE TABLE)"
		if in.rowtime != "" {
			what = fmt.Sprintf("its time attribute is %s", in.rowtime)
		}
		pl.errorf(w.DescP, "DESCRIPTOR(%s): %s is not a time attribute of the window's input; %s", w.Descriptor, w.Descriptor, what)
		return nil
	}
	want := map[string]int{"TUMBLE": 1, "HOP": 2, "SESSION": 1}[w.Kind]
	if len(w.Args) != want {
		pl.errorf(w.P, "%s takes %d interval(s) after the DESCRIPTOR, got %d (an offset is not supported yet)", w.Kind, want, len(w.Args))
		return nil
	}
	ms := make([]int64, len(w.Args))
	for i, a := range w.Args {
		iv, ok := a.(*parser.Interval)
		if !ok {
			pl.errorf(a.At(), "%s needs INTERVAL literals (INTERVAL '10' SECOND)", w.Kind)
			return nil
		}
		v, err := intervalMillis(iv)
		if err != nil || v == 0 {
			pl.errorf(a.At(), "a window's size and slide must be positive intervals")
			return nil
		}
		ms[i] = v
	}
	tvf := &windowTVF{kind: w.Kind, size: ms[0], p: w.P, partition: w.Partition}
	if len(w.PartitionP) > 0 {
		tvf.partitionP = w.PartitionP[0]
	}
	if w.Kind == "HOP" {
		tvf.slide, tvf.size = ms[0], ms[1]
	}
	out := *in
	out.window = tvf
	out.alias = w.Alias
	out.cols = append(append([]column(nil), in.cols...),
		column{name: "window_start", t: typ{k: kTime}, expr: "\x00window_start", window: "windowStart"},
		column{name: "window_end", t: typ{k: kTime}, expr: "\x00window_end", window: "windowEnd"},
		column{name: "window_time", t: typ{k: kTime}, expr: "\x00window_time", window: "windowTime"})
	return &out
}

// windowAggregate plans SELECT … FROM TABLE(window) GROUP BY window_start,
// window_end[, keys] [HAVING …]: filter, keyBy, window, filter.
func (pl *planner) windowAggregate(s *parser.Select, in *rel, base string, stmt parser.Pos) *rel {
	mark := len(pl.errs) // this query's errors, not an earlier statement's
	if len(s.GroupBy) == 0 {
		pl.errorf(s.P, "a query over a window table function must GROUP BY window_start, window_end (a window TVF without aggregation is not supported yet)")
		return nil
	}
	inScope := &scope{cols: in.cols, alias: in.alias}
	g := &grouping{in: inScope, legacy: in.window.legacy}
	var keys []groupKey
	seen := map[string]bool{}
	for _, e := range s.GroupBy {
		if c, ok := e.(*parser.Call); ok && in.window.legacy && c.P == in.window.p {
			continue
		}
		if id, ok := e.(*parser.Ident); ok && !in.window.legacy {
			name := id.Parts[len(id.Parts)-1]
			var x string
			if !pl.quietly(func() { pl.allowWindow = true; x, _ = pl.tr(e, inScope); pl.allowWindow = false }) && strings.HasPrefix(x, "\x00window_") {
				name = x[1:] // a window column, by whatever name (a cascade's starttime)
			}
			if name == "window_start" || name == "window_end" || name == "window_time" {
				out := map[string]string{"window_start": startExpr(in.window), "window_end": "windowEnd", "window_time": "(windowEnd - 1)"}[name]
				g.keys = append(g.keys, groupKey{expr: "\x00" + name, t: typ{k: kTime}, out: out})
				seen[name] = true
				continue
			}
		}
		if containsAggregate(e) {
			pl.errorf(e.At(), "GROUP BY an aggregate is not allowed")
			continue
		}
		x, t := pl.tr(e, inScope)
		keys = append(keys, groupKey{expr: x, t: t})
	}
	if !in.window.legacy && !seen["window_time"] {
		// window_time (window_end - 1 ms, the results' event time) may
		// be selected without being grouped by, as in Flink.
		g.keys = append(g.keys, groupKey{expr: "\x00window_time", t: typ{k: kTime}, out: "(windowEnd - 1)"})
	}
	if !in.window.legacy && (!seen["window_start"] || !seen["window_end"]) {
		pl.errorf(s.GroupBy[0].At(), "a window aggregation must GROUP BY both window_start and window_end")
		return nil
	}
	if in.window.kind == "SESSION" && !in.window.legacy && !samePartition(in.window.partition, s.GroupBy) {
		pl.errorf(in.window.p, "a SESSION window's PARTITION BY columns must be the aggregation's keys (GROUP BY %s, window_start, window_end): sessions are per key",
			strings.Join(in.window.partition, ", "))
		return nil
	}
	for i := range keys {
		if len(keys) == 1 && (keys[0].t.k == kInt || keys[0].t.k == kTime || keys[0].t.k == kString) {
			// One integer or text key: the window's result carries it
			// as its key, in decimal for an integer. Reading it there
			// keeps a COUNT-only window from decoding any record (an
			// aggregate over the key made SQL q11 3x the YAML's CPU).
			keys[0].out = "key"
			if keys[0].t.k != kString {
				keys[0].out = "int(key)"
			}
			break
		}
		keys[i].out = fmt.Sprintf("key%d", i)
		g.aggs = append(g.aggs, agg{call: "first(" + keys[i].expr + ")", out: keys[i].out, t: keys[i].t})
	}
	g.keys = append(g.keys, keys...)
	sc := &scope{cols: in.cols, alias: in.alias, grouped: g}
	if s.Where != nil {
		w, _ := pl.tr(s.Where, inScope)
		in.filter = and(in.filter, w)
	}
	out := &rel{winOut: in.window}
	if in.window.inner != nil {
		out.winOut = in.window.inner // its results are the inner window's
	}
	out.cols = pl.items(s.Items, sc, in, out)
	for i := range out.cols {
		switch out.cols[i].expr {
		case startExpr(in.window):
			out.cols[i].winProp = "start"
		case "windowEnd":
			out.cols[i].winProp = "end"
		}
	}
	for i, it := range s.Items {
		// A selected window_time (or *_ROWTIME) is the result's time
		// attribute: the window's results are stamped with it, so a
		// window over them (a view) cascades.
		if i < len(out.cols) && out.cols[i].expr == "(windowEnd - 1)" && it.Expr != nil {
			out.rowtime = out.cols[i].name
		}
	}
	var having string
	if s.Having != nil {
		having, _ = pl.tr(s.Having, sc)
	}
	if len(pl.errs) > mark {
		return nil
	}
	from := pl.where(in, base, stmt)
	windowOpts := [][2]string{}
	if len(keys) > 0 {
		kx := keys[0].expr
		if len(keys) > 1 {
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = k.expr
			}
			kx = "toJSON([" + strings.Join(parts, ", ") + "])"
		}
		from = pl.addShared(base+".keyBy", op{typ: "keyBy", from: []string{from}, opts: [][2]string{{"expr", quote(kx)}}, origin: stmt, stmt: stmt})
	} else {
		windowOpts = append(windowOpts, [2]string{"parallelism", "1"})
	}
	win := in.window
	spec := fmt.Sprintf("{type: tumbling, size: %dms}", win.size)
	switch win.kind {
	case "HOP":
		spec = fmt.Sprintf("{type: sliding, size: %dms, slide: %dms}", win.size, win.slide)
	case "SESSION":
		spec = fmt.Sprintf("{type: session, gap: %dms}", win.size)
	}
	if len(g.aggs) == 0 {
		// No aggregate (a window's distinct keys, as q8's sides): the
		// window operator takes at least one.
		g.aggs = append(g.aggs, agg{call: "count()", out: "agg0", t: typ{k: kInt}})
	}
	aggs := make([]string, len(g.aggs))
	for i, a := range g.aggs {
		aggs[i] = a.out + ": " + quote(a.call)
	}
	windowOpts = append(windowOpts, [2]string{"window", spec}, [2]string{"aggregate", "{" + strings.Join(aggs, ", ") + "}"})
	from = pl.addShared(base+".window", op{typ: "window", from: []string{from}, opts: windowOpts, origin: win.p, stmt: stmt})
	out.from = from
	out.filter = having
	return out
}

// startExpr is a window aggregation's window_start over its results: the
// window's start, or, for a window over an inner window's results, the
// inner window's (its end less its size).
func startExpr(w *windowTVF) string {
	if w.inner != nil && w.inner.kind == "HOP" {
		return fmt.Sprintf("(windowEnd - %d)", w.inner.size)
	}
	return "windowStart"
}

// windowCascade: s groups in, a window aggregation's results, by their
// window_start and window_end (and perhaps other keys): in as the input
// of a window over the results of each of its windows, its window
// columns the markers of that window. nil when s does not.
func (pl *planner) windowCascade(s *parser.Select, in *rel) *rel {
	if in.winOut.kind == "SESSION" {
		return nil
	}
	sc := &scope{cols: in.cols, alias: in.alias}
	marks := map[string]string{}
	for _, e := range s.GroupBy {
		var x string
		if _, ok := e.(*parser.Ident); !ok || pl.quietly(func() { x, _ = pl.tr(e, sc) }) {
			continue
		}
		for _, c := range in.cols {
			if c.expr == x && windowProperty(in, c) != "" {
				marks[c.name] = windowProperty(in, c)
			}
		}
	}
	if len(marks) != 2 {
		return nil
	}
	out := *in
	out.cols = nil
	for _, c := range in.cols {
		switch marks[c.name] {
		case "start":
			c = column{name: c.name, t: typ{k: kTime}, expr: "\x00window_start", window: "windowStart"}
		case "end":
			c = column{name: c.name, t: typ{k: kTime}, expr: "\x00window_end", window: "windowEnd"}
		}
		out.cols = append(out.cols, c)
	}
	inner := in.winOut
	out.window = &windowTVF{kind: "TUMBLE", size: or64(inner.slide, inner.size), p: s.GroupBy[0].At(), inner: inner}
	out.winOut = nil
	return &out
}
