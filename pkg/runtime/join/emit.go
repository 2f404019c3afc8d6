package join

import (
	"fmt"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// emitter builds and sends the results of a join: one JSON object of the
// select expressions per match, evaluated over the matched rows.
type emitter struct {
	cfg     *config
	ctx     *runtime.Context
	arena   runtime.Arena
	buf     []byte
	names   [][]byte // `"name":` of each select field, JSON-encoded once
	usesKey bool
}

func newEmitter(cfg *config) emitter {
	e := emitter{cfg: cfg, usesKey: cfg.exprs.Uses("key")}
	for _, n := range cfg.selects {
		b, _ := expr.AppendJSON(nil, n)
		e.names = append(e.names, append(b, ':'))
	}
	return e
}

// emit sends the result of the values of a left and a right row (pair
// false: only one side, the other nil, an outer result), stamped ts,
// unless where rejects the pair. matched reports whether it was emitted
// (where held).
func (e *emitter) emit(left, right []byte, pair bool, ts int64, out runtime.Output) (matched bool, err error) {
	s := e.cfg.exprs
	if err := s.Load(left, right); err != nil {
		return false, err
	}
	key := e.ctx.CurrentKey()
	if e.usesKey {
		s.Bind("key", string(key))
	}
	if e.cfg.where >= 0 && pair {
		ok, err := s.EvalBool(e.cfg.where)
		if err != nil || !ok {
			return false, err
		}
	}
	if e.cfg.tsExpr >= 0 {
		v, err := s.Eval(e.cfg.tsExpr)
		if err != nil {
			return false, err
		}
		if ts, err = expr.Millis(v); err != nil {
			return false, fmt.Errorf("timestamp expression: %w", err)
		}
	}
	if out == nil {
		return true, nil
	}
	b := append(e.buf[:0], '{')
	for i, name := range e.cfg.selects {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.names[i]...)
		var err error
		if b, err = s.AppendJSON(b, i); err != nil {
			return false, fmt.Errorf("select %s: %w", name, err)
		}
	}
	b = append(b, '}')
	e.buf = b
	out.Emit(runtime.Record{Key: e.arena.Copy(key), Value: e.arena.Copy(b), Timestamp: ts})
	return true, nil
}
