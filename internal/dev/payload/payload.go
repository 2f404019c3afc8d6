// Package payload makes the records `flinkgo dev produce` writes for each
// idx: the demo sequence {"idx": N}, the records of datagen's format events
// (the same bytes a datagen job emits, so a Kafka or NATS job and a datagen
// job can be fed identical data), or the value of an expression over idx,
// optionally with a key from another expression.
//
// Expressions are expr-lang (https://expr-lang.org), as in map and filter,
// but over a fixed environment checked at compile time: idx (an int), and
// with events also user (string), amount, ts (ints) and late (bool), the
// fields of the event. An unknown name or a type error is refused before
// anything is sent. hash(n) is a pseudo-random non-negative int of n (for
// shuffled keys or delays). Results are encoded as map's are: a string as
// it is, a map or list as JSON with sorted keys, a number in its text form
// (note that / divides as floats; use integer operators for timestamps).
package payload

import (
	"errors"
	"fmt"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/flinkgo/flinkgo/internal/dev/sequence"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	rtexpr "github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// Options say what record idx is.
type Options struct {
	// Events, if set, makes record idx datagen's format events record idx
	// (datagen.Events.At), timestamped with its ts.
	Events *datagen.EventOptions
	// Expr, if set, is the value: an expression over idx (and the event's
	// fields with Events). Empty: {"idx": N}, or the events record.
	Expr string
	// KeyExpr, if set, is the key, an expression like Expr. Empty: no key.
	KeyExpr string
	// First is the idx the expressions are tried on by New, so that an
	// expression that fails at run time is refused before anything is
	// sent (the first record is the one most likely to be inspected).
	First int64
}

// Maker makes records. It is not safe for concurrent use (the expression
// programs share one VM).
type Maker struct {
	events     *datagen.Events
	value, key *vm.Program
	env        map[string]any
	vm         vm.VM
}

// ErrExpr marks an expression that does not compile or fails on the idx
// New tries: bad input, not a broker problem.
var ErrExpr = errors.New("bad expression")

// New compiles o's expressions and tries them on o.First.
func New(o Options) (*Maker, error) {
	m := &Maker{env: map[string]any{}}
	if o.Events != nil {
		g, err := datagen.NewEvents(*o.Events)
		if err != nil {
			return nil, err
		}
		m.events = g
	}
	var err error
	if m.value, err = m.compile("--expr", o.Expr); err != nil {
		return nil, err
	}
	if m.key, err = m.compile("--key-expr", o.KeyExpr); err != nil {
		return nil, err
	}
	if _, _, _, err := m.Append(nil, o.First); err != nil {
		return nil, err
	}
	return m, nil
}

// compile compiles src against the environment of m (nil for "").
func (m *Maker) compile(flag, src string) (*vm.Program, error) {
	if src == "" {
		return nil, nil
	}
	env := map[string]any{"idx": 0}
	if m.events != nil {
		env["user"], env["amount"], env["ts"], env["late"] = "", 0, 0, false
	}
	p, err := expr.Compile(src, expr.Env(env), hashFunction)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v", ErrExpr, flag, src, err)
	}
	return p, nil
}

var hashFunction = expr.Function("hash", func(args ...any) (any, error) {
	return int(datagen.Hash(int64(args[0].(int)))), nil
}, new(func(int) int))

// HasKey reports whether records have a key.
func (m *Maker) HasKey() bool { return m.key != nil }

// HasTime reports whether records have an event time (Events): Append's
// ts is then the record's timestamp, even when it is 0.
func (m *Maker) HasTime() bool { return m.events != nil }

// Append appends record idx to buf: its key (keyLen bytes, 0 without
// KeyExpr) followed by its value. ts is its event time in ms since the
// epoch with Events (HasTime), 0 otherwise (the broker's time).
func (m *Maker) Append(buf []byte, idx int64) (out []byte, keyLen int, ts int64, err error) {
	var e datagen.Event
	if m.events != nil {
		e = m.events.At(idx)
		ts = e.TS
	}
	if m.value != nil || m.key != nil {
		m.bind(idx, e)
	}
	start := len(buf)
	if m.key != nil {
		if buf, err = m.eval(buf, "--key-expr", m.key, idx); err != nil {
			return buf[:start], 0, 0, err
		}
	}
	keyLen = len(buf) - start
	switch {
	case m.value != nil:
		buf, err = m.eval(buf, "--expr", m.value, idx)
	case m.events != nil:
		buf = m.events.Append(buf, e)
	default:
		buf = sequence.AppendRecord(buf, idx)
	}
	if err != nil {
		return buf[:start], 0, 0, err
	}
	return buf, keyLen, ts, nil
}

func (m *Maker) bind(idx int64, e datagen.Event) {
	m.env["idx"] = int(idx)
	if m.events != nil {
		m.env["user"], m.env["amount"], m.env["ts"], m.env["late"] = m.events.User(e), int(e.Amount), int(e.TS), e.Late
	}
}

func (m *Maker) eval(buf []byte, flag string, p *vm.Program, idx int64) ([]byte, error) {
	v, err := m.vm.Run(p, m.env)
	if err != nil {
		return buf, fmt.Errorf("%w: %s %q at idx %d: %v", ErrExpr, flag, p.Source().String(), idx, err)
	}
	out, err := rtexpr.AppendValue(buf, v)
	if err != nil {
		return buf, fmt.Errorf("%w: %s %q at idx %d: cannot encode %v: %v", ErrExpr, flag, p.Source().String(), idx, v, err)
	}
	return out, nil
}
