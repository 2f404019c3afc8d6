// Package expr compiles and evaluates the expressions of map, filter, keyBy
// and reduce (github.com/expr-lang/expr). A record's variables are the
// top-level fields of its JSON value plus value (the payload as a string),
// key and timestamp. Only the fields an expression names are decoded.
package expr

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Result says what an expression must produce.
type Result int

const (
	Any Result = iota
	Bool
)

// Reserved variable names.
const (
	VarValue     = "value"
	VarKey       = "key"
	VarTimestamp = "timestamp"
)

// Program is a compiled expression with its evaluation scratch space. It is
// not safe for concurrent use: each subtask gets its own (Clone).
type Program struct {
	src       string
	prog      *vm.Program
	want      map[string]bool // JSON fields the expression reads
	allFields bool            // it reads a variable we cannot tell statically
	useValue  bool
	useKey    bool
	useTS     bool
	extra     []string          // additional variable names bound per evaluation
	schema    map[string]string // declared types of the fields it reads (nil: no schema)
	ident     string            // the JSON field the expression is, when it is only that
	res       Result
	nat       *native // the VM-free form, when it has one (native.go)
	nc        nctx
	vm        vm.VM
	env       map[string]any
}

// Compile compiles src once; extraVars are names the caller binds itself
// (reduce's acc). Without a schema every field is untyped, and one a
// record lacks reads as nil.
func Compile(src string, res Result, extraVars ...string) (*Program, error) {
	return CompileWith(nil, src, res, extraVars...)
}

// CompileWith compiles src against the fields a source declares (nil: no
// schema, as Compile): types are checked (idx + 1 is no condition when idx
// is an int), a field the schema lacks is an error naming the closest one,
// and at run time a record lacking a declared field the expression reads,
// or holding another type, fails the evaluation with that reason.
func CompileWith(schema *api.Schema, src string, res Result, extraVars ...string) (*Program, error) {
	opts := []expr.Option{expr.Env(typedEnv(schema)), expr.AllowUndefinedVariables(), roundFunc}
	if res == Bool {
		opts = append(opts, expr.AsBool())
	}
	if schema != nil {
		if err := unknownFields(schema, src, extraVars); err != nil {
			return nil, err
		}
	}
	prog, err := expr.Compile(src, opts...)
	if err == nil {
		err = checkRound(prog.Node())
	}
	if err != nil {
		return nil, oneLine(err)
	}
	p := &Program{src: src, prog: prog, want: map[string]bool{}, extra: extraVars, env: map[string]any{}, res: res}
	extra := map[string]bool{}
	for _, v := range extraVars {
		extra[v] = true
	}
	node := prog.Node()
	if p.nat = compileNative(node, extraVars); p.nat != nil {
		p.nc = p.nat.newCtx()
	}
	if id, ok := node.(*ast.IdentifierNode); ok && res == Any && p.isField(id.Value, extra) {
		p.ident = id.Value
	}
	callees := map[ast.Node]bool{} // round(x): round is no field
	ast.Walk(&node, visitor(func(n *ast.Node) {
		if c, ok := (*n).(*ast.CallNode); ok {
			callees[c.Callee] = true
		}
	}))
	ast.Walk(&node, visitor(func(n *ast.Node) {
		id, ok := (*n).(*ast.IdentifierNode)
		if !ok || callees[*n] {
			return
		}
		switch {
		case id.Value == VarValue:
			p.useValue = true
		case id.Value == VarKey:
			p.useKey = true
		case id.Value == VarTimestamp:
			p.useTS = true
		case extra[id.Value]:
		default:
			p.want[id.Value] = true
		}
	}))
	if res == Bool {
		if err := arithmeticRoot(p); err != nil {
			return nil, err
		}
	}
	if schema != nil {
		p.schema = map[string]string{}
		for k := range p.want {
			if t, ok := schema.Fields[k]; ok {
				p.schema[k] = t
			}
		}
	}
	if len(p.schema) > 0 {
		// The VM-free form reads members raw and does not check them
		// against the declared types: a record that breaks the schema
		// must fail saying so (TestEvalWithSchema).
		p.nat = nil
	}
	return p, nil
}

// isField reports whether name reads a JSON field (not a reserved or bound
// variable).
func (p *Program) isField(name string, extra map[string]bool) bool {
	return name != VarValue && name != VarKey && name != VarTimestamp && !extra[name]
}

type visitor func(*ast.Node)

func (v visitor) Visit(n *ast.Node) { v(n) }

// Source is the expression text.
func (p *Program) Source() string { return p.src }

// Clone returns an independent copy for another subtask.
func (p *Program) Clone() *Program {
	c := *p
	c.vm = vm.VM{}
	c.env = map[string]any{}
	if p.nat != nil {
		c.nc = p.nat.newCtx()
	}
	return &c
}

// Bind sets an extra variable for the next evaluation.
func (p *Program) Bind(name string, v any) { p.env[name] = v }

// Eval evaluates the expression for r.
func (p *Program) Eval(r *runtime.Record) (any, error) {
	if p.nat != nil && p.nat.value != nil && p.res == Any && p.nat.scan(r.Value, &p.nc) {
		p.nc.rec = r
		if v, ok := p.nat.evalAny(&p.nc); ok {
			return v, nil
		}
	}
	return p.eval(r)
}

// eval evaluates the expression for r with the VM.
func (p *Program) eval(r *runtime.Record) (any, error) {
	env := p.env
	for k := range p.want {
		env[k] = nil // a field absent from this record must read as nil
	}
	if len(p.want) > 0 {
		if err := fields(r.Value, p.want, env); err != nil {
			return nil, fmt.Errorf("record value is %s; expression %q reads fields of a JSON object", describe(r.Value, err), p.src)
		}
		if err := conformAll(p.schema, env); err != nil {
			return nil, fmt.Errorf("expression %q: %w", p.src, err)
		}
	}
	if p.useValue {
		env[VarValue] = string(r.Value)
	}
	if p.useKey {
		env[VarKey] = string(r.Key)
	}
	if p.useTS {
		env[VarTimestamp] = r.Timestamp
	}
	if p.ident != "" {
		return env[p.ident], nil // a plain field: no need to run the VM
	}
	out, err := p.vm.Run(p.prog, env)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", p.src, oneLine(err))
	}
	return out, nil
}

// EvalBool evaluates a boolean expression.
func (p *Program) EvalBool(r *runtime.Record) (bool, error) {
	if p.nat != nil && p.nat.scan(r.Value, &p.nc) {
		p.nc.rec = r
		if b, ok := p.nat.evalBool(&p.nc); ok {
			return b, nil
		}
	}
	out, err := p.eval(r)
	if err != nil {
		return false, err
	}
	return asBool(p.src, out)
}

// asBool is a boolean expression's result, or the error naming it.
func asBool(src string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression %q gave %v (%s), not true or false", src, v, reflect.TypeOf(v))
	}
	return b, nil
}

// AppendValue appends the record bytes of the expression's result for r,
// as AppendValue(dst, Eval(r)) does: a string as it is, anything else as
// JSON. Bytes of dst's spare capacity past the result may be overwritten
// (objects copy short members as 16-byte words): pass a dst whose
// capacity is the caller's, as an arena's Alloc is.
func (p *Program) AppendValue(dst []byte, r *runtime.Record) ([]byte, error) {
	if p.nat != nil && p.nat.scan(r.Value, &p.nc) {
		p.nc.rec = r
		if out, ok := p.nat.appendValue(dst, &p.nc); ok {
			return out, nil
		}
	}
	v, err := p.Eval(r)
	if err != nil {
		return dst, err
	}
	return AppendValue(dst, v)
}

func describe(v []byte, err error) string {
	const max = 60
	s := string(v)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q (%v)", s, err)
}

// oneLine keeps the first line of a compile error ("unexpected token EOF
// (1:5)"): the caret drawing below it breaks the one problem per line of
// a spec's error list, whose position already points at the expression.
func oneLine(err error) error {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		return errors.New(msg[:i])
	}
	return err
}

// StaticKind is the kind of value the expression gives as far as its
// types are known at compile time (a schema's fields, literals): reflect.
// Interface (or Invalid) when it depends on the record.
func (p *Program) StaticKind() reflect.Kind {
	t := p.prog.Node().Type()
	if t == nil {
		return reflect.Invalid
	}
	return t.Kind()
}
