package expr

import (
	"fmt"

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
}

// CompileRowExpr compiles src over the rows named rows (bound to their
// decoded members) and the variables vars (bound with RowSet.Bind).
func CompileRowExpr(src string, res Result, rows []string, vars ...string) (*RowExpr, error) {
	opts := []expr.Option{expr.Env(map[string]any{}), expr.AllowUndefinedVariables()}
	if res == Bool {
		opts = append(opts, expr.AsBool())
	}
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, err
	}
	e := &RowExpr{src: src, prog: prog, fields: make([]map[string]bool, len(rows)), all: make([]bool, len(rows)), identRow: -1,
		vars: map[string]bool{}}
	index := map[string]int{}
	for i, r := range rows {
		index[r] = i
		e.fields[i] = map[string]bool{}
	}
	node := prog.Node()
	covered := map[*ast.IdentifierNode]bool{}
	var idents []*ast.IdentifierNode
	ast.Walk(&node, visitor(func(n *ast.Node) {
		switch x := (*n).(type) {
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
	if m, ok := node.(*ast.MemberNode); ok && res == Any && !m.Optional {
		id, isID := m.Node.(*ast.IdentifierNode)
		prop, isStr := m.Property.(*ast.StringNode)
		if i, row := index[idOf(id, isID)]; row && isStr {
			e.identRow, e.identField = i, prop.Value
		}
	}
	_ = vars // documented: names the caller binds; nothing to check
	return e, nil
}

func idOf(id *ast.IdentifierNode, ok bool) string {
	if !ok {
		return ""
	}
	return id.Value
}

// Source is the expression text.
func (e *RowExpr) Source() string { return e.src }

// RowSet evaluates several RowExprs over the same rows with one scanner
// pass per row: each row's JSON is read for the members any of them names.
// An absent row (the missing side of an outer join) is an empty object:
// its members read as nil. Not safe for concurrent use (Clone per subtask).
type RowSet struct {
	names []string
	exprs []*RowExpr
	want  []map[string]bool // per row; nil: every member
	vm    vm.VM
	env   map[string]any
	rows  []map[string]any
}

// NewRowSet combines the expressions over rows (the names they were
// compiled with).
func NewRowSet(rows []string, exprs ...*RowExpr) *RowSet {
	s := &RowSet{names: rows, exprs: exprs, want: make([]map[string]bool, len(rows)), env: map[string]any{},
		rows: make([]map[string]any, len(rows))}
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
	}
	return s
}

// Clone returns an independent copy for another subtask.
func (s *RowSet) Clone() *RowSet { return NewRowSet(s.names, s.exprs...) }

// Bind sets a variable for the next evaluations.
func (s *RowSet) Bind(name string, v any) { s.env[name] = v }

// Load decodes the rows (JSON objects; nil: absent) for the next
// evaluations. It fails when a row that is read is not a JSON object.
func (s *RowSet) Load(rows ...[]byte) error {
	for i, data := range rows {
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

// Eval evaluates expression k over the loaded rows.
func (s *RowSet) Eval(k int) (any, error) {
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
	v, err := s.Eval(k)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression %q gave %v (%T), not true or false", s.exprs[k].src, v, v)
	}
	return b, nil
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
