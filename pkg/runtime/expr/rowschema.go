package expr

import (
	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/types"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// CompileRowExprWith is CompileRowExpr checked against the schema of each
// row (schemas[i] for rows[i]; nil: that row is untyped): a member the
// schema of its row lacks (left.idz) is an error naming the closest one,
// and the declared types are checked as CompileWith checks a field's
// (left.idx > "a" is refused when idx is an int).
//
// Only the compile is checked: at run time the rows are read as without a
// schema (a member a row lacks reads as nil), so the native form stays.
// Conforming each row at run time would cost the join's VM-free path on
// every row for a mistake the source's records rarely make.
func CompileRowExprWith(schemas []*api.Schema, src string, res Result, rows []string, vars ...string) (*RowExpr, error) {
	if err := checkRows(schemas, src, res, rows); err != nil {
		return nil, err
	}
	return CompileRowExpr(src, res, rows, vars...)
}

// checkRows reports the first member of a typed row that its schema lacks,
// else the type errors of src with each typed row's declared members.
func checkRows(schemas []*api.Schema, src string, res Result, rows []string) error {
	env := types.Map{}
	typed := map[string]*api.Schema{}
	for i, r := range rows {
		if i < len(schemas) && schemas[i] != nil {
			env[r] = rowType(schemas[i])
			typed[r] = schemas[i]
		}
	}
	if len(typed) == 0 {
		return nil
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return nil // CompileRowExpr reports it
	}
	var bad error
	ast.Walk(&tree.Node, visitor(func(n *ast.Node) {
		m, ok := (*n).(*ast.MemberNode)
		if !ok || bad != nil || m.Method {
			return
		}
		id, isID := m.Node.(*ast.IdentifierNode)
		prop, isStr := m.Property.(*ast.StringNode)
		if !isID || !isStr {
			return
		}
		if s := typed[id.Value]; s != nil {
			if _, ok := s.Fields[prop.Value]; !ok {
				bad = unknownField(s, prop.Value, id.Value)
			}
		}
	}))
	if bad != nil {
		return bad
	}
	// A check only: the program run is CompileRowExpr's, untyped, since
	// a typed one may use instructions (OpEqualInt) that assume the
	// declared types hold for every row.
	opts := []expr.Option{expr.Env(env), expr.AllowUndefinedVariables(), roundFunc}
	if res == Bool {
		opts = append(opts, expr.AsBool())
	}
	if _, err := expr.Compile(src, opts...); err != nil {
		return oneLine(err)
	}
	return nil
}

// rowType is the checker's type of a row of schema s: its declared members
// with their types (any: unchecked).
func rowType(s *api.Schema) types.Map {
	t := types.Map{}
	zero := typedEnv(s)
	for name := range s.Fields {
		if v, ok := zero[name]; ok {
			t[name] = types.TypeOf(v)
		} else {
			t[name] = types.Any
		}
	}
	return t
}
