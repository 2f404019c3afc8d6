package expr

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// bid is a Nexmark bid: each fuzzed record is read after it, so the
// remembered member order (shapes) is exercised, hit and missed.
const bid = `{"event_type":2,"auction":1000,"bidder":1001,"price":347556,"channel":"Apple","url":"https://www.nexmark.com/ramx/nux/jkc/item.htm?query=1","dateTime":1767225600000,"extra":"ihdjiifmwvbeffdgwsvuvubqyyrplwndfjdaonbwmayssiwhrxydtarrolnuesyo"}`

// sameValue is reflect.DeepEqual, NaN equal to NaN.
func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok && math.IsNaN(x) && math.IsNaN(y) {
			return true
		}
	}
	return reflect.DeepEqual(a, b)
}

// FuzzNativeAgreesWithTheVM: over any record, each expression of the
// corpus gives the same result (value, error or not, record bytes) on
// the native path as the VM gives over the scanner's map. Run by make
// fuzz.
func FuzzNativeAgreesWithTheVM(f *testing.F) {
	for i, rec := range append(append(nativeRecords, dupRecords...), bid) {
		f.Add([]byte(rec), uint16(i))
	}
	type prog struct {
		p   *Program
		res Result
	}
	var progs []prog
	for _, src := range nativeExprs {
		for _, res := range []Result{Any, Bool} {
			if p, err := Compile(src, res); err == nil && p.nat != nil {
				progs = append(progs, prog{p, res})
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint16) {
		pr := progs[int(which)%len(progs)]
		p, vm := pr.p.Clone(), vmOnly(pr.p)
		for _, rec := range [][]byte{[]byte(bid), data, data} {
			r := &runtime.Record{Value: rec, Key: []byte("k1"), Timestamp: 7}
			what := p.Source() + " over " + string(rec)
			// Over bytes that are not JSON the native path checks only
			// the members it decodes (a member it skips may be malformed,
			// as simdjson's on-demand reader allows; sources of format
			// json check whole records, CheckJSON): where the VM fails
			// there, the native path may answer instead.
			lenient := func(werr, gerr error) bool { return werr != nil && gerr == nil && !json.Valid(rec) }
			if pr.res == Bool {
				got, gerr := p.EvalBool(r)
				want, werr := vm.EvalBool(r)
				if lenient(werr, gerr) {
					continue
				}
				require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
				require.Equal(t, want, got, what)
				continue
			}
			got, gerr := p.Eval(r)
			want, werr := vm.Eval(r)
			if lenient(werr, gerr) {
				continue
			}
			require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
			require.True(t, werr != nil || sameValue(want, got), "%s: native %#v, VM %#v", what, got, want)
			gb, gerr := p.AppendValue(nil, r)
			wb, werr := vm.AppendValue(nil, r)
			if lenient(werr, gerr) {
				continue
			}
			require.Equal(t, werr != nil, gerr != nil, "%s: errors %v / %v", what, gerr, werr)
			require.Equal(t, string(wb), string(gb), what)
		}
	})
}

// FuzzProject: a join side's projection of any record reads as the
// record does for the expressions (natively and in the VM), holds what
// encoding/json reads of the members read when the record is JSON, and
// is itself valid JSON then. Run by make fuzz.
func FuzzProject(f *testing.F) {
	for _, rec := range append(append(nativeRecords, dupRecords...), bid) {
		f.Add([]byte(rec))
	}
	srcs := []string{`left.a`, `left.b == 3`, `left.a + left.b`, `left.s`, `{p: left.price, e: left.extra, u: left.url}`, `left.auction % 123 == 0`}
	var exprs []*RowExpr
	read := map[string]bool{"a": true, "b": true, "s": true, "price": true, "extra": true, "url": true, "auction": true}
	for _, src := range srcs {
		e, err := CompileRowExpr(src, Any, []string{"left", "right"})
		require.NoError(f, err)
		exprs = append(exprs, e)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewRowSet([]string{"left", "right"}, exprs...)
		vm := NewRowSet([]string{"left", "right"}, exprs...)
		for i := range vm.nexprs {
			vm.nexprs[i] = nativeRowExpr{}
		}
		_, _ = s.Project(0, nil, []byte(bid)) // a shape to hit or miss
		proj, ok := s.Project(0, []byte("xyz"), data)
		if !ok {
			require.Equal(t, "xyz", string(proj), "a failed projection leaves dst as it was")
			return
		}
		require.Equal(t, "xyz", string(proj[:3]))
		proj = proj[3:]
		var whole map[string]any
		if json.Unmarshal(data, &whole) == nil && whole != nil && utf8.Valid(data) {
			require.True(t, json.Valid(proj), "%q projected to %q", data, proj)
			var kept map[string]any
			require.NoError(t, json.Unmarshal(proj, &kept))
			for k := range whole {
				if !read[k] {
					delete(whole, k)
				}
			}
			require.Equal(t, whole, kept, "%q projected to %q", data, proj)
		}
		for _, set := range []*RowSet{s, vm} {
			for k := range exprs {
				require.NoError(t, set.Load(data, nil))
				want, werr := set.Eval(k)
				require.NoError(t, set.Load(proj, nil))
				got, gerr := set.Eval(k)
				require.Equal(t, werr != nil, gerr != nil, "%s over %q / %q: %v / %v", srcs[k], data, proj, werr, gerr)
				require.True(t, werr != nil || sameValue(want, got), "%s over %q: %#v, projected %q: %#v", srcs[k], data, want, proj, got)
			}
		}
	})
}
