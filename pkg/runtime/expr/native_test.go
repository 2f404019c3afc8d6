package expr

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// vmOnly is p without its native form: what the VM alone computes.
func vmOnly(p *Program) *Program {
	c := p.Clone()
	c.nat = nil
	return c
}

var nativeRecords = []string{
	`{"a": 1, "b": 2, "s": "x", "t": true, "f": 1.5, "n": null}`,
	`{"a": -7, "b": 0, "s": "OR", "t": false, "f": -0.25}`,
	`{"a": 123, "b": 3, "s": "CA", "f": 2.0, "extra": "long text here"}`,
	`{"a": 9007199254740993, "b": 12345678901234567890, "s": "é", "f": 1e300}`,
	`{"s": "a\"b", "a": "12", "b": 1}`,
	`{"a": {"x": 1}, "b": [1, 2], "s": "ID"}`,
	`{"b": 5}`,
	`{}`,
	`{"a": 1, "a": 2, "b": 3}`,
	`[1, 2]`,
	`"text"`,
	`{"a": 1, "b": 2`,
	`{"a": 1.0e2, "b": 7, "s": "<&>", "f": 0}`,
	`{"event_type": 2, "auction": 1107, "price": 347556, "extra": "abc"}`,
	`{"event_type": 0, "state": "OR", "id": 1000}`,
	`{"a": tru, "b": 1}`,
	// Long strings (plainString's words), plain or not at every distance
	// from the quotes, and integers at the edges of the canonical ones.
	`{"a": 0, "b": 10, "s": "abcdefghijklmnopqrstuvwxyz0123456789", "extra": "abcdefgh\u0041ijklmnop"}`,
	`{"a": 123456789012345678, "b": 1234567890123456789, "s": "ééééééééé", "extra": "tab\there, long enough"}`,
	`{"a": -0, "b": 01, "s": "abcdefg\"hijklmnop", "extra": "abcdefghijklmno\\"}`,
	`{"auction":1000,"price":347556,"extra":"ihdjiifmwvbeffdgwsvuvubqyyrplwndfjdaonbwmayssiwhrxyd","s":"12345678"}`,
	// Shapes against the one remembered from the records before (scanRow):
	// the same again, a longer key, an escaped key, a repeat past it.
	`{"a": 1, "b": 2, "s": "x", "t": true, "f": 1.5, "n": null}`,
	`{"a": 1, "b": 2, "s": "x", "t": true, "f": 1.5, "n": null}`,
	`{"ab": 1, "b": 2, "s": "y"}`,
	`{"\u0061": 4, "b": 2}`,
	`{"a": 1, "b": 2, "b": 3}`,
	`{"a":3,"b":4,"s":"z"}`,
	`{"b": 2, "a": 1}`,
}

var nativeExprs = []string{
	`a == 1`, `a != 1`, `a < b`, `a <= b`, `a > 1`, `a >= -7`, `f > 1`, `f == 2`, `a == f`,
	`s == "OR"`, `s != "x"`, `s < "D"`, `t`, `!t`, `not t`, `t && a == 1`, `t || a == 1`,
	`a == nil`, `n == nil`, `missing == nil`, `nil == a`,
	`a + b`, `a - b`, `a * b`, `a / b`, `a % b`, `a % 123 == 0`, `0.908 * a`, `f * 2`, `-a`, `-f`,
	`s in ["OR", "ID", "CA"]`, `a in ["1"]`, `event_type == 2 && auction % 123 == 0`,
	`event_type == 0 && state in ["OR", "ID", "CA"]`, `a`, `s`, `f`, `t`, `n`, `missing`,
	`{x: a, y: s, z: 0.908 * b}`, `{auction: auction, price: price, extra: extra}`, `{b: b, a: a}`,
	`{s: s, t: t, n: n}`, `timestamp > 5`, `key == "k1"`, `{k: key, ts: timestamp}`, `a > 1 && s == "x"`,
	`a == "12"`, `s + s`, `a ** 2`, `value == "x"`, `a == b || f < 0`, `(a + 1) * 2 > b`,
	`max(a, b)`, `min(a, f)`, `max(f, a) > 1`, `max(s, a)`, `min(n, 1)`, `{m: max(a, b), n: min(b, f)}`,
	`round(f)`, `round(a)`, `round(0.908 * a, 3)`, `round(f * 3.3, 1)`, `round(a, -2)`, `round(s, 2)`, `round(n)`,
	`{p: round(0.908 * price, 3)}`, `round(a, b)`, `round(f, 15)`, `round(a, 2) > 1`,
}

// The native form gives the VM's answer for every expression and record
// it handles, and hands the rest to the VM: results, errors and record
// bytes agree.
func TestNativeAgreesWithTheVM(t *testing.T) {
	handled := 0
	for _, src := range nativeExprs {
		for _, res := range []Result{Any, Bool} {
			p, err := Compile(src, res)
			if err != nil {
				continue // not a boolean expression
			}
			if p.nat != nil {
				handled++
			}
			vm := vmOnly(p)
			// Forwards and backwards: each record after records of other
			// shapes.
			for _, rec := range append(slices.Clone(nativeRecords), reversed(nativeRecords)...) {
				r := &runtime.Record{Value: []byte(rec), Key: []byte("k1"), Timestamp: 7}
				what := fmt.Sprintf("%s over %s", src, rec)
				if res == Bool {
					got, gerr := p.EvalBool(r)
					want, werr := vm.EvalBool(r)
					require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
					require.Equal(t, want, got, what)
					continue
				}
				got, gerr := p.Eval(r)
				want, werr := vm.Eval(r)
				require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
				if werr == nil && !reflect.DeepEqual(want, got) {
					t.Fatalf("%s: native %#v, VM %#v", what, got, want)
				}
				gb, gerr := p.AppendValue(nil, r)
				wb, werr := vm.AppendValue(nil, r)
				require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
				require.Equal(t, string(wb), string(gb), what)
				// After bytes already there, with room to spare (as the
				// map's arena gives) or none, the record's capacity its
				// length (as the arena's): the word copies stay inside.
				for _, room := range []int{0, 64} {
					dst := append(make([]byte, 0, 3+room), "xyz"...)
					exact := []byte(rec)[:len(rec):len(rec)]
					gb, gerr := p.AppendValue(dst, &runtime.Record{Value: exact, Key: r.Key, Timestamp: r.Timestamp})
					require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
					if gerr == nil {
						require.Equal(t, "xyz"+string(wb), string(gb), "%s, room %d", what, room)
					}
				}
			}
		}
	}
	require.Greater(t, handled, 40, "most of the corpus takes the native path")
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// A Clone has native scratch space of its own.
func TestNativeClone(t *testing.T) {
	p, err := Compile(`a + b`, Any)
	require.NoError(t, err)
	c := p.Clone()
	require.NotNil(t, c.nat)
	v, err := c.Eval(&runtime.Record{Value: []byte(`{"a": 1, "b": 2}`)})
	require.NoError(t, err)
	require.Equal(t, 3, v)
}

func BenchmarkNativeFilter(b *testing.B) {
	rec := &runtime.Record{Value: []byte(`{"event_type":2,"auction":1000,"bidder":1001,"price":347556,"channel":"Apple","url":"https://www.nexmark.com/ramx/nux/jkc/item.htm?query=1","dateTime":1767225600000,"extra":"ihdjiifmwvbeffdgwsvuvubqyyrplwndfjdaonbwmayssiwhrxydtarrolnuesyo"}`)}
	for _, native := range []bool{true, false} {
		p, _ := Compile(`event_type == 2 && auction % 123 == 0`, Bool)
		if !native {
			p = vmOnly(p)
		}
		b.Run(fmt.Sprint("native=", native), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, _ = p.EvalBool(rec)
			}
		})
	}
}

var rowExprs = []string{
	`left.a`, `right.s`, `left.a + right.b`, `left.a == right.b`, `left.num >= right.maxn`, `int(left.key)`,
	`int(left.f)`, `int(right.s)`, `right.dateTime <= left.expires`, `left.missing`, `right.a * 2 > left.b`,
	`key`, `key == "k1"`, `windowStart`, `windowEnd - windowStart`, `left.t && right.t`, `left`, `left.x.y`,
	`left.s in ["OR", "CA"]`, `0.908 * right.price`,
}

var rowRecords = [][2]string{
	{`{"a": 1, "b": 2, "s": "x", "t": true, "num": 5, "key": "1000", "f": 2.5, "expires": 10}`, `{"b": 2, "s": "OR", "t": true, "maxn": 5, "dateTime": 9, "price": 100, "a": 3}`},
	{`{"a": 7, "num": 4, "key": "12x", "x": {"y": 1}}`, `{"maxn": 5, "s": "\u00e9", "a": "no"}`},
	{`{"a": 1}`, ``},
	{``, `{"s": "CA", "a": 1}`},
	{`[1]`, `{"a": 1}`},
}

// A RowSet's native forms give the VM's answers over rows, as over
// records.
func TestNativeRowsAgreeWithTheVM(t *testing.T) {
	rows := []string{"left", "right"}
	vars := []string{"key", "windowStart", "windowEnd"}
	var exprs []*RowExpr
	for _, src := range rowExprs {
		e, err := CompileRowExpr(src, Any, rows, vars...)
		require.NoError(t, err, src)
		exprs = append(exprs, e)
	}
	nat := NewRowSet(rows, exprs...)
	vm := NewRowSet(rows, exprs...)
	for i := range vm.nexprs {
		vm.nexprs[i] = nativeRowExpr{}
	}
	handled := 0
	for _, n := range nat.nexprs {
		if n.value != nil {
			handled++
		}
	}
	require.Greater(t, handled, 15)
	for _, s := range []*RowSet{nat, vm} {
		s.Bind("key", "k1")
		s.Bind("windowStart", int64(1000))
		s.Bind("windowEnd", int64(3000))
	}
	row := func(s string) []byte {
		if s == "" {
			return nil
		}
		return []byte(s)
	}
	for _, rec := range rowRecords {
		l, r := row(rec[0]), row(rec[1])
		require.NoError(t, nat.Load(l, r))
		require.NoError(t, vm.Load(l, r))
		for k, src := range rowExprs {
			what := fmt.Sprintf("%s over %s / %s", src, rec[0], rec[1])
			got, gerr := nat.Eval(k)
			want, werr := vm.Eval(k)
			require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
			if w, ok := want.(int64); ok {
				want = int(w) // a bound int64 comes back as int natively
			}
			if g, ok := got.(int64); ok {
				got = int(g)
			}
			if werr == nil && !reflect.DeepEqual(want, got) {
				t.Fatalf("%s: native %#v, VM %#v", what, got, want)
			}
			gb, gerr := nat.AppendJSON(nil, k)
			wb, werr := vm.AppendJSON(nil, k)
			require.Equal(t, werr != nil, gerr != nil, what)
			require.Equal(t, string(wb), string(gb), what)
		}
	}
}

// Project keeps the members a RowSet reads of a row, as they are.
func TestRowSetProject(t *testing.T) {
	a, err := CompileRowExpr(`left.a + right.b`, Any, []string{"left", "right"})
	require.NoError(t, err)
	b, err := CompileRowExpr(`left.s`, Any, []string{"left", "right"})
	require.NoError(t, err)
	s := NewRowSet([]string{"left", "right"}, a, b)
	out, ok := s.Project(0, nil, []byte(`{"x": [1, {"y": "}"}], "s": "a\"b", "z": 1, "a": 1.50}`))
	require.True(t, ok)
	require.Equal(t, `{"s":"a\"b","a":1.50}`, string(out))
	out, ok = s.Project(1, nil, []byte(`{"a": 1}`))
	require.True(t, ok)
	require.Equal(t, `{}`, string(out))
	_, ok = s.Project(0, nil, []byte(`[1]`))
	require.False(t, ok)
	w, err := CompileRowExpr(`left`, Any, []string{"left", "right"})
	require.NoError(t, err)
	_, ok = NewRowSet([]string{"left", "right"}, w).Project(0, nil, []byte(`{"a": 1}`))
	require.False(t, ok, "the whole row is read")
}

// Project keeps exactly the members read, as they are and in their order,
// over records of changing shapes (its remembered member order).
func TestRowSetProjectAcrossShapes(t *testing.T) {
	a, err := CompileRowExpr(`{x: left.a, y: left.s, z: left.extra, w: left.auction}`, Any, []string{"left", "right"})
	require.NoError(t, err)
	s := NewRowSet([]string{"left", "right"}, a)
	want := map[string]bool{"a": true, "s": true, "extra": true, "auction": true}
	recs := append(slices.Clone(nativeRecords), reversed(nativeRecords)...)
	recs = append(recs, nativeRecords...)
	kept := 0
	for _, rec := range recs {
		var in map[string]json.RawMessage
		if json.Unmarshal([]byte(rec), &in) != nil || strings.Count(rec, `"a"`) > 1 || strings.Count(rec, `"b"`) > 1 {
			continue // not an object, or one with a member twice
		}
		out, ok := s.Project(0, nil, []byte(rec))
		if !ok {
			require.Contains(t, rec, `\`, "only keys with escapes are refused: %s", rec)
			continue
		}
		kept++
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out, &got), "%s -> %s", rec, out)
		exp := map[string]json.RawMessage{}
		for k, v := range in {
			if want[k] {
				exp[k] = v
			}
		}
		require.Equal(t, exp, got, "%s -> %s", rec, out)
		var order []string
		for k := range in {
			if want[k] {
				order = append(order, k)
			}
		}
		slices.SortFunc(order, func(x, y string) int { return strings.Index(rec, `"`+x+`"`) - strings.Index(rec, `"`+y+`"`) })
		var gotOrder []string
		for _, k := range order {
			gotOrder = append(gotOrder, k)
			require.Contains(t, string(out), `"`+k+`":`)
		}
		slices.SortFunc(gotOrder, func(x, y string) int {
			return strings.Index(string(out), `"`+x+`":`) - strings.Index(string(out), `"`+y+`":`)
		})
		require.Equal(t, order, gotOrder, "members in the record's order: %s -> %s", rec, out)
	}
	require.Greater(t, kept, 30)
}

// Multi's native path gives the VM's values.
func TestNativeMultiAgreesWithTheVM(t *testing.T) {
	var progs []*Program
	for _, src := range []string{`a`, `s`, `a * 2 + b`, `f`, `n`, `missing`} {
		p, err := Compile(src, Any)
		require.NoError(t, err)
		progs = append(progs, p)
	}
	nat, vm := NewMulti(progs...), NewMulti(progs...)
	require.NotNil(t, nat.nat)
	vm.nat = nil
	for _, rec := range nativeRecords {
		r := &runtime.Record{Value: []byte(rec)}
		got, want := make([]any, len(progs)), make([]any, len(progs))
		gerr, werr := nat.Eval(r, got), vm.Eval(r, want)
		require.Equal(t, werr != nil, gerr != nil, rec)
		if werr == nil {
			require.Equal(t, want, got, rec)
		}
	}
}

// plain (eight bytes at a time) agrees with the byte loop.
func TestPlainStrings(t *testing.T) {
	slow := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	x := uint64(1)
	for n := 0; n < 20000; n++ {
		b := make([]byte, n%40)
		for i := range b {
			x = x*6364136223846793005 + 1442695040888963407
			c := byte(x >> 56)
			if x>>40&3 != 0 {
				c = 0x20 + c%0x5f // mostly printable
			}
			b[i] = c
		}
		require.Equal(t, slow(string(b)), plain(string(b)), "%q", b)
	}
}

// plainString finds the end of a plain string in one pass, as scanString
// and plain would in two, and refuses every other string.
func TestPlainStringAgreesWithScanning(t *testing.T) {
	x := uint64(7)
	for n := 0; n < 20000; n++ {
		b := []byte{'"'}
		for range n % 70 {
			x = x*6364136223846793005 + 1442695040888963407
			c := byte(x >> 56)
			if x>>40&7 != 0 {
				c = 0x20 + c%0x5f // mostly printable, '"' and '\\' included
			}
			b = append(b, c)
		}
		b = append(b, `", "x": 1}`[:n%11]...) // the end may be missing
		end, ok := plainString(b, 0)
		wantEnd, escaped, err := scanString(b, 0)
		if err != nil || escaped || !plain(string(b[1:wantEnd-1])) {
			require.False(t, ok, "%q", b)
			continue
		}
		require.True(t, ok, "%q", b)
		require.Equal(t, wantEnd, end, "%q", b)
	}
}

// BenchmarkPlainString is the strings of a Nexmark bid (its channel, url
// and extra): a third of the time q0's projection spends scanning.
func BenchmarkPlainString(b *testing.B) {
	strs := [][]byte{[]byte(`"channel-7767",`), []byte(`"https://www.nexmark.com/s_x/qzk/aov/item.htm?query=1&channel_id=361234432",`),
		[]byte(`"mamsqurzlrppjhzlpxnfijaipkiheafwniislokudnurgpkgerqkjrdtwftokpgggmxqzme"}`)}
	for i := 0; i < b.N; i++ {
		for _, s := range strs {
			if end, ok := plainString(s, 0); !ok || end != len(s)-1 {
				b.Fatal(end, ok)
			}
		}
	}
}

// BenchmarkNativeProjection is Nexmark q0's and q1's map over a bid.
func BenchmarkNativeProjection(b *testing.B) {
	rec := &runtime.Record{Value: []byte(`{"event_type":2,"auction":1000,"bidder":1001,"price":347556,"channel":"Apple","url":"https://www.nexmark.com/ramx/nux/jkc/item.htm?query=1","dateTime":1767225600000,"extra":"ihdjiifmwvbeffdgwsvuvubqyyrplwndfjdaonbwmayssiwhrxydtarrolnuesyo"}`)}
	for name, src := range map[string]string{
		"q0": `{auction: auction, bidder: bidder, price: price, dateTime: dateTime, extra: extra}`,
		"q1": `{auction: auction, bidder: bidder, price: 0.908 * price, dateTime: dateTime, extra: extra}`,
	} {
		p, err := Compile(src, Any)
		require.NoError(b, err)
		b.Run(name, func(b *testing.B) {
			var dst []byte
			for i := 0; i < b.N; i++ {
				dst, _ = p.AppendValue(dst[:0], rec)
			}
		})
	}
}

// The native path checks the members it decodes, not the ones it skips
// (records of a json source were checked whole, CheckJSON): a filter that
// does not need a malformed member answers, one that reads it fails as
// the VM does.
func TestNativeChecksTheMembersItReads(t *testing.T) {
	p, err := Compile(`event_type == 0 && state in ["OR", "ID", "CA"]`, Bool)
	require.NoError(t, err)
	require.NotNil(t, p.nat)
	ok, err := p.EvalBool(&runtime.Record{Value: []byte(`{"state":A0,"event_type":1}`)})
	require.NoError(t, err)
	require.False(t, ok)
	_, err = p.EvalBool(&runtime.Record{Value: []byte(`{"event_type":0,"state":A0}`)})
	require.ErrorContains(t, err, "not a JSON object")
	_, err = vmOnly(p).EvalBool(&runtime.Record{Value: []byte(`{"state":A0,"event_type":1}`)})
	require.Error(t, err, "the VM decodes the whole record")
}
