package expr

import (
	"fmt"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Multi evaluates several expressions over one record with a single pass
// over its JSON fields (a window's aggregates). An expression that is just
// a field name is read from that pass without running the VM. Not safe for
// concurrent use (Clone per subtask).
type Multi struct {
	progs                   []*Program
	idents                  []string // the field an expression is, or ""
	want                    map[string]bool
	useValue, useKey, useTS bool
	schema                  map[string]string // declared types of the fields read
	vm                      vm.VM
	env                     map[string]any
	// The native forms of the programs, sharing one scan (nil: some
	// program has none).
	nat    *native
	values []nexpr
	nc     nctx
}

// NewMulti combines compiled programs.
func NewMulti(progs ...*Program) *Multi {
	m := &Multi{progs: progs, idents: make([]string, len(progs)), want: map[string]bool{}, env: map[string]any{}}
	for i, p := range progs {
		for k := range p.want {
			m.want[k] = true
		}
		m.useValue = m.useValue || p.useValue
		m.useKey = m.useKey || p.useKey
		m.useTS = m.useTS || p.useTS
		for k, t := range p.schema {
			if m.schema == nil {
				m.schema = map[string]string{}
			}
			m.schema[k] = t
		}
		if id, ok := p.prog.Node().(*ast.IdentifierNode); ok {
			m.idents[i] = id.Value
		}
	}
	m.nat = &native{}
	if len(m.schema) > 0 {
		m.nat = nil // no VM-free form: it does not check declared types (see Compile)
	}
	for _, p := range progs {
		if m.nat == nil {
			break
		}
		v := m.nat.compile(p.prog.Node())
		if v == nil || len(p.extra) > 0 {
			m.nat, m.values = nil, nil
			break
		}
		m.values = append(m.values, v)
	}
	if m.nat != nil {
		m.nc = m.nat.newCtx()
	}
	return m
}

// Clone returns an independent copy for another subtask.
func (m *Multi) Clone() *Multi {
	progs := make([]*Program, len(m.progs))
	for i, p := range m.progs {
		progs[i] = p.Clone()
	}
	return NewMulti(progs...)
}

// Eval evaluates every expression for r into out (len(out) = number of
// programs).
func (m *Multi) Eval(r *runtime.Record, out []any) error {
	if m.nat != nil && m.nat.scan(r.Value, &m.nc) {
		m.nc.rec = r
		ok := true
		for i, v := range m.values {
			var x nval
			if x, ok = v(&m.nc); !ok {
				break
			}
			out[i] = x.any()
		}
		if ok {
			return nil
		}
	}
	env := m.env
	for k := range m.want {
		env[k] = nil
	}
	if len(m.want) > 0 {
		if err := fields(r.Value, m.want, env); err != nil {
			return fmt.Errorf("record value is %s; the expressions read fields of a JSON object", describe(r.Value, err))
		}
		if err := conformAll(m.schema, env); err != nil {
			return err
		}
	}
	if m.useValue {
		env[VarValue] = string(r.Value)
	}
	if m.useKey {
		env[VarKey] = string(r.Key)
	}
	if m.useTS {
		env[VarTimestamp] = r.Timestamp
	}
	for i, p := range m.progs {
		if id := m.idents[i]; id != "" {
			out[i] = env[id]
			continue
		}
		v, err := m.vm.Run(p.prog, env)
		if err != nil {
			return fmt.Errorf("expression %q: %w", p.src, oneLine(err))
		}
		out[i] = v
	}
	return nil
}
