package transform

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// mainReduce is reduceOp as it was before the fold (flinkgo 1e2fd4a): the
// accumulator a Go value in keyed state, the expression on the VM, state
// written by jsonCodec. The reference the fold must equal.
type mainReduce struct {
	prog    *expr.Program
	init    *expr.Program
	acc     *state.Value[any]
	arena   runtime.Arena
	scratch []byte
}

func (o *mainReduce) reduce(r runtime.Record) ([]byte, error) {
	o.acc.SetKey(r.Key)
	acc, ok := o.acc.Get()
	if !ok && o.init == nil {
		acc = decodeValue(r.Value)
	} else {
		var err error
		if !ok {
			if acc, err = o.init.Eval(&r); err != nil {
				return nil, err
			}
		}
		o.prog.Bind("acc", acc)
		if acc, err = o.prog.Eval(&r); err != nil {
			return nil, err
		}
	}
	v, err := toBytes(&o.arena, &o.scratch, acc)
	if err != nil {
		return nil, err
	}
	o.acc.Put(acc)
	return v, nil
}

// collector keeps what an operator emits.
type collector struct{ got []runtime.Record }

func (c *collector) Emit(r runtime.Record)         { c.got = append(c.got, r) }
func (c *collector) EmitTo(string, runtime.Record) {}

var foldRecords = []string{
	`{"a": 1, "price": 100, "s": "x", "f": 1.5, "dateTime": 1767225600000, "extra": "abc"}`,
	`{"a": 3, "price": 250, "s": "OR", "f": 0.5, "dateTime": 1767225600001, "extra": "long text, no escapes"}`,
	`{"a": -7, "price": 90, "s": "é", "f": 2.0, "dateTime": 1767225610000, "extra": ""}`,
	`{"a": 1e2, "price": 300, "s": "a\"b", "f": -0.25, "dateTime": 1767225609999}`,
	`{"a": 123456789012345, "price": 1234567890123456, "s": "big", "f": 1e300}`,
	`{"a": 12345678901234567890, "price": 5, "f": 0.1, "s": null}`,
	`{"a": "12", "price": "7", "s": 5}`,
	`{"a": {"x": 1}, "price": [1, 2], "s": "nested"}`,
	`{"price": 400}`,
	`{}`,
	`[1, 2]`,
	`"text"`,
	`{"a": 1, "a": 2, "price": 3}`,
	`{"a": 2, "price": 100, "f": 1000000.5, "s": "<&>"}`,
	`{"a": 0, "price": -0, "f": -0.0, "s": "z"}`,
	`{"a": 5, "price": 999, "f": 3, "s": "\u0041"}`,
}

// foldCases are a reduce's init and expression (init "": none).
var foldCases = [][2]string{
	{`{top: 0}`, `{top: max(acc.top, price), keep: price >= acc.top || dateTime % 10000 == 0, auction: a, bidder: s, price: price, dateTime: dateTime, extra: extra}`},
	{`{sum: 0, n: 0}`, `{sum: acc.sum + price, n: acc.n + 1}`},
	{`{sum: 0.5}`, `{sum: acc.sum + f}`},
	{`{m: a, mn: a}`, `{m: max(acc.m, a), mn: min(acc.mn, a)}`},
	{``, `{last: s, prev: acc.last, a: a}`},
	{`{x: 1}`, `{x: acc.x * 2 + a}`},
	{`{t: 1}`, `{t: acc.t / 2, u: acc.t - 1}`},
	{`{c: 0}`, `{c: acc.c % 3 + a}`},
	{`{v: 0}`, `{k: key, v: acc.v + 1}`},
	{`{n: 0}`, `{ts: timestamp, n: acc.n + 1}`},
	{`{ok: false}`, `{ok: acc.ok || a > 1, s: s}`},
	{`{sum: 0}`, `{sum: acc.sum + 1, copy: acc.missing}`},
	{`{}`, `{z: acc.sum + 1}`},
	{`0`, `acc + a`},
	{`0`, `{x: a, y: acc}`},
	{`0`, `{x: a}`},
	{`{"sum": 0}`, `{"sum": acc.sum + a, "mod": a % 5}`},
	{`{f: 0.5}`, `{f: acc.f * 2, g: acc.f}`},
	{`{big: 999999999999999}`, `{big: acc.big + 1, s: string(acc.big)}`},
	{`{s: ""}`, `{s: acc.s + s}`},
	{`{p: 0}`, `{p: price, prev: acc.p + 0}`},
	{`{big: 12345678901234567, n: 0}`, `{n: acc.n + 1, odd: acc.big % 2 == 1}`},
}

// reducers builds main's reduce and the current one over their own keyed
// backends, each restored from its snapshot when given.
func reducers(t *testing.T, initSrc, src string, mainSnap, snap []byte) (*mainReduce, *reduceOp, [2]*state.KeyedBackend) {
	t.Helper()
	p, err := expr.Compile(src, expr.Any, "acc")
	require.NoError(t, err)
	var init *expr.Program
	if initSrc != "" {
		init, err = expr.Compile(initSrc, expr.Any)
		require.NoError(t, err)
	}
	var kbs [2]*state.KeyedBackend
	backend := func(snap []byte) *runtime.Context {
		kb := state.NewKeyedBackend(128, state.AllKeyGroups(128))
		if kbs[0] == nil {
			kbs[0] = kb
		} else {
			kbs[1] = kb
		}
		if snap != nil {
			s, err := state.Decode(snap)
			require.NoError(t, err)
			kb.Restore([]*state.Snapshot{s})
		}
		return runtime.NewContext(runtime.ContextOptions{UID: "r", Keyed: kb, MaxParallelism: 128})
	}
	m := &mainReduce{prog: p.Clone()}
	m.acc, err = runtime.NewValue[any](backend(mainSnap), "acc", mainCodec{})
	require.NoError(t, err)
	o := &reduceOp{prog: p.Clone()}
	if init != nil {
		m.init, o.init = init.Clone(), init.Clone()
	}
	if f := expr.NewFold(p, init, "acc"); f != nil {
		o.fold = f.Clone()
	}
	require.NoError(t, o.Open(backend(snap)))
	return m, o, kbs
}

// mainCodec is main's accumulator codec, jsonCodec, reading what reduceOp
// writes too: main's snapshots are the form before the version byte, and
// each restores from the other's.
type mainCodec struct{ jsonCodec }

func (mainCodec) Decode(b []byte) (any, error) {
	a, err := accumCodec{}.Decode(b)
	if err != nil {
		return nil, err
	}
	return a.value()
}

var foldKeys = []string{"k1", "k2", "k3"}

// feed runs records through both and requires the same output, errors and
// state encodings.
// A restored accumulator not updated since may differ in bytes (main
// re-encodes the value it decoded, the fold keeps the JSON it read: 1e+06
// against 1000000) but not in value.
func feed(t *testing.T, what string, m *mainReduce, o *reduceOp, recs []string, restored bool) (native int) {
	t.Helper()
	for i, rec := range recs {
		r := runtime.Record{Key: []byte(foldKeys[i%len(foldKeys)]), Value: []byte(rec), Timestamp: int64(7 + i)}
		if o.fold != nil {
			o.acc.SetKey(r.Key)
			a, ok := o.acc.Get()
			if ok && !a.vm {
				_, ok = o.fold.Append(nil, &r, a.json, a.at)
			} else if !ok {
				_, ok = o.fold.Append(nil, &r, nil, nil)
			} else {
				ok = false
			}
			if ok {
				native++
			}
		}
		want, werr := m.reduce(r)
		out := &collector{}
		gerr := o.reduce(&r, out)
		at := fmt.Sprintf("%s, record %d %s", what, i, rec)
		require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", at, werr, gerr)
		if werr == nil {
			require.Len(t, out.got, 1, at)
			require.Equal(t, string(want), string(out.got[0].Value), at)
		}
		for _, k := range foldKeys {
			m.acc.SetKey([]byte(k))
			mv, mok := m.acc.Get()
			o.acc.SetKey([]byte(k))
			ov, ook := o.acc.Get()
			require.Equal(t, mok, ook, "%s: key %s", at, k)
			if !mok {
				continue
			}
			oa, err := accumCodec{}.Decode(accumCodec{}.Append(nil, ov))
			require.NoError(t, err)
			mb, ob := jsonCodec{}.Append(nil, mv), oa.json
			if restored {
				mv, err := jsonCodec{}.Decode(mb)
				require.NoError(t, err)
				ov, err := jsonCodec{}.Decode(ob)
				require.NoError(t, err)
				require.Equal(t, mv, ov, "%s: key %s state", at, k)
				continue
			}
			require.Equal(t, string(mb), string(ob), "%s: key %s state", at, k)
		}
	}
	return native
}

// The fold gives main's reduce results, errors and state over a corpus of
// expressions, records and accumulators; snapshots of either restore in
// the other and continue alike.
func TestReduceFoldAgreesWithMain(t *testing.T) {
	recs := append(append([]string(nil), foldRecords...), foldRecords...)
	folded, native := 0, 0
	for _, c := range foldCases {
		what := fmt.Sprintf("init %q expr %q", c[0], c[1])
		m, o, kbs := reducers(t, c[0], c[1], nil, nil)
		if o.fold != nil {
			folded++
		}
		half := len(recs) / 2
		native += feed(t, what, m, o, recs[:half], false)
		mainSnap, _ := state.Encode(state.NewOperatorState(), kbs[0])
		snap, _ := state.Encode(state.NewOperatorState(), kbs[1])
		// Each restored from the other's snapshot, and from its own.
		m2, o2, _ := reducers(t, c[0], c[1], snap, mainSnap)
		feed(t, what+" (restored across)", m2, o2, recs[half:], true)
		m3, o3, _ := reducers(t, c[0], c[1], mainSnap, snap)
		feed(t, what+" (restored)", m3, o3, recs[half:], true)
		native += feed(t, what+" (not restored)", m, o, recs[half:], false)
	}
	require.Greater(t, folded, 14, "most cases have a fold")
	require.Greater(t, native, 150, "the fold takes most records")
	t.Logf("%d cases with a fold, %d of %d records folded natively", folded, native, len(foldCases)*len(recs))
}
