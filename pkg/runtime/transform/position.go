// Package transform holds the built-in operators that transform records:
// map, filter, keyBy (stateless) and count, reduce (keyed state).
package transform

import (
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// compile compiles an expression option, reporting problems at its line.
func compile(c *runtime.ConfigContext, field, src string, res expr.Result, extra ...string) *expr.Program {
	if src == "" {
		return nil
	}
	p, err := expr.CompileWith(c.Schema, src, res, extra...)
	if err != nil {
		c.Errorf(field, "operator %q: cannot compile expression %q: %v", c.Op.UID, src, err)
		return nil
	}
	return p
}

// toBytes turns an expression result into record bytes, in the arena.
func toBytes(a *runtime.Arena, scratch *[]byte, v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return append(a.Alloc(len(s)), s...), nil
	}
	b, err := expr.AppendValue((*scratch)[:0], v)
	*scratch = b
	if err != nil {
		return nil, err
	}
	return a.Copy(b), nil
}
