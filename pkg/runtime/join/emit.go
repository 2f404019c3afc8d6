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
// (where held). A result that cannot be built goes through the operator's
// onError (failed): under skip or sideOutput err is nil.
func (e *emitter) emit(left, right []byte, pair bool, ts int64, out runtime.Output) (matched bool, err error) {
	s := e.cfg.exprs
	if err := s.Load(left, right); err != nil {
		return false, e.failed(left, right, ts, out, err)
	}
	key := e.ctx.CurrentKey()
	if e.usesKey {
		s.Bind("key", string(key))
	}
	if e.cfg.where >= 0 && pair {
		ok, err := s.EvalBool(e.cfg.where)
		if err != nil {
			return false, e.failed(left, right, ts, out, fmt.Errorf("where: %w", err))
		}
		if !ok {
			return false, nil
		}
	}
	if e.cfg.tsExpr >= 0 {
		v, err := s.Eval(e.cfg.tsExpr)
		if err == nil {
			ts, err = expr.Millis(v)
		}
		if err != nil {
			return true, e.failed(left, right, ts, out, fmt.Errorf("timestamp expression: %w", err))
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
			return true, e.failed(left, right, ts, out, fmt.Errorf("select %s: %w", name, err))
		}
	}
	b = append(b, '}')
	e.buf = b
	out.Emit(runtime.Record{Key: e.arena.Copy(key), Value: e.arena.Copy(b), Timestamp: ts})
	return true, nil
}

// failed hands a result that could not be built from rows left and right
// (nil: that side is missing) to onError (runtime.Context.ResultError):
// the dead letter's record is {"left": …, "right": …}.
func (e *emitter) failed(left, right []byte, ts int64, out runtime.Output, err error) error {
	v := append([]byte(nil), `{"left":`...)
	v = appendRow(v, left)
	v = append(v, `,"right":`...)
	v = appendRow(v, right)
	v = append(v, '}')
	return e.ctx.ResultError(runtime.Record{Key: e.ctx.CurrentKey(), Value: v, Timestamp: ts}, out, err)
}

// appendRow appends a row's value, null for none.
func appendRow(b, row []byte) []byte {
	if row == nil {
		return append(b, "null"...)
	}
	return append(b, row...)
}
