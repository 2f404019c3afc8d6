package expr

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// typedEnv is the compile-time environment of a schema: each declared
// field as a zero value of its type, so expr's checker knows it. Fields of
// type any, the reserved names and the caller's extra variables stay
// undeclared (unknown types, checked at run time).
func typedEnv(s *api.Schema) map[string]any {
	env := map[string]any{}
	if s == nil {
		return env
	}
	for name, typ := range s.Fields {
		switch typ {
		case api.FieldString:
			env[name] = ""
		case api.FieldInt:
			env[name] = 0
		case api.FieldFloat:
			env[name] = 0.0
		case api.FieldBool:
			env[name] = false
		case api.FieldList:
			env[name] = []any{}
		case api.FieldMap:
			env[name] = map[string]any{}
		}
	}
	return env
}

// unknownFields returns the first variable of src that is neither a field
// of the schema, nor a reserved name, an extra variable, a name the
// expression declares itself (let) or a function: a misspelled field,
// which without a schema would silently read as nil.
func unknownFields(s *api.Schema, src string, extra []string) error {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil // compile reports it
	}
	known := map[string]bool{VarValue: true, VarKey: true, VarTimestamp: true}
	for _, v := range extra {
		known[v] = true
	}
	for k := range s.Fields {
		known[k] = true
	}
	callees := map[ast.Node]bool{}
	var bad *ast.IdentifierNode
	ast.Walk(&tree.Node, visitor(func(n *ast.Node) {
		switch x := (*n).(type) {
		case *ast.CallNode:
			callees[x.Callee] = true
		case *ast.VariableDeclaratorNode:
			known[x.Name] = true
		}
	}))
	ast.Walk(&tree.Node, visitor(func(n *ast.Node) {
		if id, ok := (*n).(*ast.IdentifierNode); ok && bad == nil && !known[id.Value] && !callees[*n] {
			bad = id
		}
	}))
	if bad == nil {
		return nil
	}
	return unknownField(s, bad.Value, "")
}

// unknownField is the error for a field name the schema s lacks (of the
// row named row, if any), naming the closest one and all it has.
func unknownField(s *api.Schema, name, row string) error {
	msg := fmt.Sprintf("unknown field %q", name)
	if row != "" {
		msg += " of " + row
	}
	if c := api.Closest(name, s.Names()); c != "" {
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	return fmt.Errorf("%s (the schema of source %q has %s)", msg, s.Source, strings.Join(s.Names(), ", "))
}

// arithmeticRoot reports an expression that must give true or false but
// is arithmetic at its root (idx + 1): it gives a number or a string
// whatever the record, a mistake a schema is not needed to see.
func arithmeticRoot(p *Program) error {
	switch n := p.prog.Node().(type) {
	case *ast.BinaryNode:
		switch n.Operator {
		case "+", "-", "*", "/", "%", "**", "^", "..":
			return fmt.Errorf("expression %q gives the result of %s, a number or a string, never true or false: write a condition (for example %s > 0)", p.src, n.Operator, p.src)
		}
	case *ast.UnaryNode:
		if n.Operator == "-" {
			return fmt.Errorf("expression %q gives a number, never true or false: write a condition", p.src)
		}
	}
	return nil
}

// conform checks a field a schema declares, as a record holds it: present
// and of its type (a JSON integer is a float too).
func conform(name string, v any, typ string) (any, error) {
	ok := false
	switch typ {
	case api.FieldString:
		_, ok = v.(string)
	case api.FieldInt:
		_, ok = v.(int)
	case api.FieldFloat:
		switch x := v.(type) {
		case float64:
			ok = true
		case int:
			return float64(x), nil
		}
	case api.FieldBool:
		_, ok = v.(bool)
	case api.FieldList:
		_, ok = v.([]any)
	case api.FieldMap:
		_, ok = v.(map[string]any)
	default:
		ok = v != nil
	}
	if ok {
		return v, nil
	}
	if v == nil {
		return nil, fmt.Errorf("the record has no field %q (the schema declares it %s)", name, typ)
	}
	return nil, fmt.Errorf("field %q is %v, not %s as the schema declares", name, v, typ)
}

// conformAll conforms the declared fields an evaluation read into env.
func conformAll(schema map[string]string, env map[string]any) error {
	for name, typ := range schema {
		v, err := conform(name, env[name], typ)
		if err != nil {
			return err
		}
		env[name] = v
	}
	return nil
}
