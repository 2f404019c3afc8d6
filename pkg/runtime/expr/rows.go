package expr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// RowExpr is an expression over named JSON rows, such as a join's left and
// right: left.id reads member id of the left row. Compile it with
// CompileRowExpr and evaluate it within a RowSet.
type RowExpr struct {
	src  string
	prog *vm.Program
	// fields[i] are the members of row i the expression reads; all[i]:
	// it uses row i otherwise (left, left[f]) and needs every member.
	fields []map[string]bool
	all    []bool
	// row and field, when the expression is just row.field (no VM then).
	identRow   int
	identField string
	vars       map[string]bool // other variables it reads
	declared   []string        // the variables the caller binds
	node       ast.Node
}

// CompileRowExpr compiles src over the rows named rows (bound to their
// decoded members) and the variables vars (bound with RowSet.Bind).
func CompileRowExpr(src string, res Result, rows []string, vars ...string) (*RowExpr, error) {
	opts := []expr.Option{expr.Env(map[string]any{}), expr.AllowUndefinedVariables(), roundFunc}
	if res == Bool {
		opts = append(opts, expr.AsBool())
	}
	prog, err := expr.Compile(src, opts...)
	if err == nil {
		err = checkRound(prog.Node())
	}
	if err != nil {
		return nil, oneLine(err) // one line per spec error, as for Compile
	}
	e := &RowExpr{src: src, prog: prog, fields: make([]map[string]bool, len(rows)), all: make([]bool, len(rows)), identRow: -1,
		vars: map[string]bool{}, declared: vars, node: prog.Node()}
	index := map[string]int{}
	for i, r := range rows {
		index[r] = i
		e.fields[i] = map[string]bool{}
	}
	node := prog.Node()
	covered := map[*ast.IdentifierNode]bool{}
	named := map[string]bool{} // let names and called functions
	var idents []*ast.IdentifierNode
	ast.Walk(&node, visitor(func(n *ast.Node) {
		switch x := (*n).(type) {
		case *ast.VariableDeclaratorNode:
			named[x.Name] = true
		case *ast.CallNode:
			if id, ok := x.Callee.(*ast.IdentifierNode); ok {
				named[id.Value] = true
			}
		case *ast.MemberNode:
			id, ok := x.Node.(*ast.IdentifierNode)
			prop, isStr := x.Property.(*ast.StringNode)
			if i, row := index[idOf(id, ok)]; row && isStr && !x.Method {
				e.fields[i][prop.Value] = true
				covered[id] = true
			}
		case *ast.IdentifierNode:
			idents = append(idents, x)
		}
	}))
	for _, id := range idents {
		i, row := index[id.Value]
		switch {
		case row && !covered[id]:
			e.all[i] = true
		case !row:
			e.vars[id.Value] = true
		}
	}
	if err := undeclared(e.vars, named, rows, vars); err != nil {
		return nil, err
	}
	if m, ok := node.(*ast.MemberNode); ok && res == Any && !m.Optional {
		id, isID := m.Node.(*ast.IdentifierNode)
		prop, isStr := m.Property.(*ast.StringNode)
		if i, row := index[idOf(id, isID)]; row && isStr {
			e.identRow, e.identField = i, prop.Value
		}
	}
	return e, nil
}

// undeclared refuses a name that is neither a row, a variable the caller
// binds, a let name nor a function: over rows a bare member name (idx
// for left.idx) would read as nothing at run time, every time.
func undeclared(used, named map[string]bool, rows, vars []string) error {
	var bad []string
	for v := range used {
		if !named[v] && v != "$env" && !slices.Contains(vars, v) {
			bad = append(bad, v)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	qualified := make([]string, len(rows))
	for i, r := range rows {
		qualified[i] = r + "." + bad[0]
	}
	known := "the rows " + strings.Join(rows, ", ")
	if len(vars) > 0 {
		known += " and " + strings.Join(vars, ", ")
	}
	return fmt.Errorf("unknown name %q: an expression here reads %s; write %s", bad[0], known, strings.Join(qualified, " or "))
}

func idOf(id *ast.IdentifierNode, ok bool) string {
	if !ok {
		return ""
	}
	return id.Value
}

// Reads reports whether the expression reads row i (any member of it).
func (e *RowExpr) Reads(i int) bool { return e.all[i] || len(e.fields[i]) > 0 }

// Source is the expression text.
func (e *RowExpr) Source() string { return e.src }

// RowSet evaluates several RowExprs over the same rows with one scanner
// pass per row: each row's JSON is read for the members any of them names.
// An absent row (the missing side of an outer join) is an empty object:
// its members read as nil. Expressions the native form handles (native.go)
// read the members' raw JSON; the others, or a row the native scan cannot
// read, go to the VM over the decoded members. Not safe for concurrent use
// (Clone per subtask).
type RowSet struct {
	names []string
	exprs []*RowExpr
	want  []map[string]bool // per row; nil: every member
	vm    vm.VM
	env   map[string]any
	rows  []map[string]any

	nat    *native         // the native forms' members and variables
	nexprs []nativeRowExpr // per expression
	nc     nctx
	data   [][]byte // the rows loaded
	// projShapes[row] is the member orders Project last met (see there).
	projShapes []shapeSet
	proj       projectSink // Project's, kept here so that it does not escape per call
	projFound  []found     // Project's, kept for the next call
	natOK      bool        // every row loaded scanned natively
	decode     bool        // the VM's maps must be filled from data
}

// nativeRowExpr is an expression's native value and predicate forms (nil:
// none).
type nativeRowExpr struct {
	value nexpr
	pred  npred
}

// NewRowSet combines the expressions over rows (the names they were
// compiled with).
func NewRowSet(rows []string, exprs ...*RowExpr) *RowSet {
	s := &RowSet{names: rows, exprs: exprs, want: make([]map[string]bool, len(rows)), env: map[string]any{},
		rows: make([]map[string]any, len(rows)), nat: &native{rows: rows}}
	for i := range rows {
		s.want[i] = map[string]bool{}
		s.rows[i] = map[string]any{}
		s.env[rows[i]] = s.rows[i]
	}
	for _, e := range exprs {
		for i := range rows {
			if e.all[i] {
				s.want[i] = nil
			}
			if s.want[i] != nil {
				for f := range e.fields[i] {
					s.want[i][f] = true
				}
			}
		}
		for _, v := range e.declared {
			if !slices.Contains(s.nat.vars, v) {
				s.nat.vars = append(s.nat.vars, v)
			}
		}
	}
	for _, e := range exprs {
		s.nexprs = append(s.nexprs, nativeRowExpr{value: s.nat.compile(e.node), pred: s.nat.predicate(e.node)})
	}
	for len(s.nat.perRow) < len(rows) {
		s.nat.perRow = append(s.nat.perRow, nil)
	}
	s.nc = s.nat.newCtx()
	s.projShapes = make([]shapeSet, len(rows))
	return s
}

// Clone returns an independent copy for another subtask.
func (s *RowSet) Clone() *RowSet { return NewRowSet(s.names, s.exprs...) }

// Bind sets a variable for the next evaluations.
func (s *RowSet) Bind(name string, v any) {
	s.env[name] = v
	if i := slices.Index(s.nat.vars, name); i >= 0 {
		s.nc.vars[i] = nativeOf(v)
	}
}

// Load takes the rows (JSON objects; nil: absent) for the next
// evaluations; they must not change until the next Load. A row that is
// read and is not a JSON object fails the evaluation that reads it.
func (s *RowSet) Load(rows ...[]byte) error {
	s.data = append(s.data[:0], rows...)
	s.decode = true
	s.nc.newRecord()
	s.natOK = true
	for i, data := range rows {
		if data != nil && !s.nat.scanRow(data, i, &s.nc) {
			s.natOK = false
		}
	}
	return nil
}

// decoded fills the VM's row maps from the loaded rows (once per Load).
func (s *RowSet) decoded() error {
	if !s.decode {
		return nil
	}
	s.decode = false
	for i, data := range s.data {
		m := s.rows[i]
		clear(m)
		if data == nil || (s.want[i] != nil && len(s.want[i]) == 0) {
			continue
		}
		if err := fields(data, s.want[i], m); err != nil {
			return fmt.Errorf("%s row is %s; the expressions read its fields", s.names[i], describe(data, err))
		}
	}
	return nil
}

// Eval evaluates expression k over the loaded rows. (An int64 bound with
// Bind may come back as an int.)
func (s *RowSet) Eval(k int) (any, error) {
	if n := s.nexprs[k].value; n != nil && s.natOK {
		if v, ok := n(&s.nc); ok {
			return v.any(), nil
		}
	}
	return s.vmEval(k)
}

func (s *RowSet) vmEval(k int) (any, error) {
	if err := s.decoded(); err != nil {
		return nil, err
	}
	e := s.exprs[k]
	if e.identRow >= 0 {
		return s.rows[e.identRow][e.identField], nil
	}
	out, err := s.vm.Run(e.prog, s.env)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", e.src, err)
	}
	return out, nil
}

// EvalBool evaluates boolean expression k over the loaded rows.
func (s *RowSet) EvalBool(k int) (bool, error) {
	if p := s.nexprs[k].pred; p != nil && s.natOK {
		if b, ok := p(&s.nc); ok {
			return b, nil
		}
	}
	v, err := s.vmEval(k)
	if err != nil {
		return false, err
	}
	return asBool(s.exprs[k].src, v)
}

// AppendJSON appends the JSON of expression k's result over the loaded
// rows (AppendJSON of Eval).
func (s *RowSet) AppendJSON(dst []byte, k int) ([]byte, error) {
	if n := s.nexprs[k].value; n != nil && s.natOK {
		if v, ok := n(&s.nc); ok {
			if out, ok := appendNative(dst, v); ok {
				return out, nil
			}
		}
	}
	v, err := s.vmEval(k)
	if err != nil {
		return dst, err
	}
	return AppendJSON(dst, v)
}

// Uses reports whether an expression reads variable name (so the caller
// can skip binding what nobody reads).
func (s *RowSet) Uses(name string) bool {
	for _, e := range s.exprs {
		if e.vars[name] {
			return true
		}
	}
	return false
}

// Len is the number of expressions.
func (s *RowSet) Len() int { return len(s.exprs) }

// With returns a set of s's expressions and exprs.
func (s *RowSet) With(exprs ...*RowExpr) *RowSet {
	return NewRowSet(s.names, append(append([]*RowExpr(nil), s.exprs...), exprs...)...)
}

// Project appends to dst a JSON object holding only the members of data
// that the expressions read of row (in data's order, values as they are,
// a member named twice twice: the last wins when it is read), so a join
// keeps no more of a row than it will read. ok is false when the
// expressions read the whole row or data is not an object the scanner
// reads (keep data as it is: evaluating then reports what is wrong).
func (s *RowSet) Project(row int, dst, data []byte) (out []byte, ok bool) {
	want := s.want[row]
	if want == nil {
		return dst, false
	}
	got, ok := scanFast(data, &s.projShapes[row], s.projFound[:0])
	if !ok {
		s.proj = projectSink{s: s, want: want}
		if got, ok = scanMembers(data, &s.projShapes[row], &s.proj, s.projFound[:0]); !ok {
			return dst, false
		}
		s.projFound = got[:0]
	}
	dst = append(dst, '{')
	for k, m := range got {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(dst, data[m.keyAt:m.keyEnd]...), ':')
		dst = append(dst, data[m.valAt:m.valEnd]...)
	}
	return append(dst, '}'), true
}

// projectSink is Project's side of scanMembers. Its shapes (projShapes)
// are what Project met at each position of the row's last records, field
// 1 for a member kept and -1 for one dropped: the rows of a side mostly
// share their members' order, and a match costs three word comparisons
// instead of scanning the key and a map lookup.
type projectSink struct {
	s    *RowSet
	want map[string]bool
}

func (p *projectSink) lookup(key []byte, escaped bool, _ int) (int, string, bool) {
	if escaped {
		return -1, "", false
	}
	f := -1
	if p.want[string(key)] {
		f = 1
	}
	return f, p.s.nat.keyString(&p.s.nc, key, -1), true
}
