package join

import (
	"fmt"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// keySelector computes a side's join key from its key expression: a
// string as it is, anything else in its JSON form, so the number 1000 is
// the same key whether a side's field is "id" or "seller". It runs on the
// upstream subtask (runtime.KeySelector).
type keySelector struct {
	prog    *expr.Program
	arena   runtime.Arena
	scratch []byte
}

func newKeySelector(p *expr.Program) runtime.KeySelector { return &keySelector{prog: p.Clone()} }

func (k *keySelector) Key(r *runtime.Record) ([]byte, error) {
	b, err := k.prog.AppendValue(k.scratch[:0], r)
	if err != nil {
		return nil, fmt.Errorf("join key %q of record %s: %w", k.prog.Source(), quote(r.Value), err)
	}
	k.scratch = b
	if string(b) == "null" {
		// A missing member (a string "null" is rejected too: rare, and
		// as unjoinable as nothing).
		return nil, fmt.Errorf("join key %q gave nothing (a missing field?) for record %s", k.prog.Source(), quote(r.Value))
	}
	return k.arena.Copy(b), nil
}

// quote shows a record value in an error, cut to a readable length.
func quote(v []byte) string {
	if len(v) > 120 {
		return fmt.Sprintf("%q…", v[:120])
	}
	return fmt.Sprintf("%q", v)
}
