package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// reviewRecord is record i: three shapes (member order and string lengths
// vary, so the expression scanner's shape cache and 16-byte copies are
// exercised), and every bad-th record is not JSON.
func reviewRecord(i, bad int) string {
	if bad > 0 && i%bad == bad-1 {
		return fmt.Sprintf("oops %d", i)
	}
	switch i % 3 {
	case 0:
		return fmt.Sprintf(`{"idx":%d,"name":"n%d","tag":"a","v":%d}`, i, i%5, i*3)
	case 1:
		return fmt.Sprintf(`{"name":"n%d","idx":%d,"v":%d,"extra":"%s"}`, i%5, i, i*3, strings.Repeat("z", i%40))
	}
	return fmt.Sprintf(`{"idx":%d,"v":%d,"name":"a long name of more than sixteen bytes %d"}`, i, -i, i)
}

type reviewSource struct {
	count, bad, next int
	arena            runtime.Arena
	emitted          [][]byte
	recycled         *atomic.Int64
}

func (s *reviewSource) Open(*runtime.Context) error { return nil }
func (s *reviewSource) Close() error                { return nil }
func (s *reviewSource) SnapshotState(int64) error   { return nil }

func (s *reviewSource) Poll(b *runtime.Batch) error {
	for ; s.next < s.count && len(b.Records) < cap(b.Records); s.next++ {
		txt := reviewRecord(s.next, s.bad)
		v := s.arena.Append(len(txt), func(d []byte) []byte { return append(d, txt...) })
		s.emitted = append(s.emitted, v)
		b.Records = append(b.Records, runtime.Record{Value: v})
	}
	if s.next == s.count {
		return runtime.ErrEndOfInput
	}
	return nil
}

// recyclingReviewSource poisons every value it emitted when told to
// recycle (as a source whose next Poll writes over them would).
type recyclingReviewSource struct{ reviewSource }

func (s *recyclingReviewSource) RecycleValues() {
	for _, v := range s.emitted {
		for i := range v {
			v[i] = 'X'
		}
	}
	s.emitted = s.emitted[:0]
	s.recycled.Add(1)
	s.arena.Rewind()
}

func runReview(t *testing.T, recycle bool, par int, bad int, ops string) (api.JobInfo, []string, []string, int64) {
	t.Helper()
	const count = 6000
	var recycled atomic.Int64
	src := runtime.Definition{Type: "test-review", Kind: api.KindSource, Doc: "test only",
		Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
			cc.Decode(&struct{}{})
			return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source {
				rs := reviewSource{count: count, bad: bad, recycled: &recycled}
				if recycle {
					return &recyclingReviewSource{rs}
				}
				return &rs
			}}
		}}
	name := runtimetest.UniqueName(t)
	spec := fmt.Sprintf("name: review\nparallelism: %d\nchaining: true\noperators:\n  - {uid: src, type: test-review}", par) +
		strings.ReplaceAll(ops, "NAME", name) + "\n"
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src})})
	runtimetest.Wait(t, j, 60*time.Second)
	a, b := runtimetest.Values(name+"A"), runtimetest.Values(name+"B")
	slices.Sort(a)
	slices.Sort(b)
	return j.Info(), a, b, recycled.Load()
}

// Every spec gives the same results whether or not the source recycles
// (and poisons) its values; where it recycles is reported.
func TestRecyclingChangesNoResult(t *testing.T) {
	for _, c := range []struct {
		name     string
		par, bad int
		ops      string
		recycles bool
	}{
		{"filter on a string, map an object", 1, 0, `
  - {uid: f, type: filter, from: [src], expr: 'name == "n1"'}
  - {uid: m, type: map, from: [f], expr: "{i: idx, n: name, w: v * 2}"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}`, true},
		{"filter forwards raw records", 1, 0, `
  - {uid: f, type: filter, from: [src], expr: "idx % 2 == 0"}
  - {uid: out, type: test-collect, from: [f], name: NAMEA}`, true},
		{"map to an unchained slow sink", 1, 0, `
  - {uid: f, type: filter, from: [src], expr: 'name in ["n1", "n3"] && v > 10'}
  - {uid: m, type: map, from: [f], expr: "{n: name, e: extra}"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA, parallelism: 2, delay: 1ms}`, true},
		{"map bare field and value", 1, 0, `
  - {uid: m, type: map, from: [src], expr: "name"}
  - {uid: m2, type: map, from: [src], expr: "value"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}
  - {uid: out2, type: test-collect, from: [m2], name: NAMEB}`, true},
		{"filter with two chained readers", 1, 0, `
  - {uid: f, type: filter, from: [src], expr: "v > 100"}
  - {uid: m, type: map, from: [f], expr: "{i: idx}"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}
  - {uid: out2, type: test-collect, from: [f], name: NAMEB}`, true},
		{"parallelism 2", 2, 0, `
  - {uid: f, type: filter, from: [src], expr: "v > 100"}
  - {uid: m, type: map, from: [f], expr: "{i: idx, n: name}"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}`, true},
		{"map then keyBy count", 1, 0, `
  - {uid: m, type: map, from: [src], expr: "{n: name}"}
  - {uid: k, type: keyBy, from: [m], expr: "n"}
  - {uid: c, type: count, from: [k]}
  - {uid: out, type: test-collect, from: [c], name: NAMEA}`, true},
		{"filter skips bad records", 1, 7, `
  - {uid: f, type: filter, from: [src], expr: "v > 100", onError: skip}
  - {uid: out, type: test-collect, from: [f], name: NAMEA}`, true},
		{"map skips bad records", 1, 7, `
  - {uid: m, type: map, from: [src], expr: "{i: idx}", onError: skip}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}`, true},
		{"filter dead letters read", 1, 7, `
  - {uid: f, type: filter, from: [src], expr: "v > 100", onError: sideOutput}
  - {uid: out, type: test-collect, from: [f], name: NAMEA}
  - {uid: dl, type: test-collect, from: [f.errors], name: NAMEB}`, true},
		{"map dead letters read", 1, 7, `
  - {uid: m, type: map, from: [src], expr: "{i: idx}", onError: sideOutput}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}
  - {uid: dl, type: test-collect, from: [m.errors], name: NAMEB, delay: 1ms}`, true},
		{"map dead letters read chained filter", 1, 7, `
  - {uid: f, type: filter, from: [src], expr: 'name != "n2"', onError: sideOutput}
  - {uid: m, type: map, from: [f], expr: "{i: idx}", onError: skip}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}
  - {uid: dl, type: test-collect, from: [f.errors], name: NAMEB}`, true},
		{"union of two sources", 1, 0, `
  - {uid: src2, type: test-review}
  - {uid: u, type: test-pass, from: [src, src2]}
  - {uid: m, type: map, from: [u], expr: "{i: idx}"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}`, false},
		{"filter union of two sources", 1, 0, `
  - {uid: src2, type: test-review}
  - {uid: f, type: filter, from: [src, src2], expr: "v > 100"}
  - {uid: out, type: test-collect, from: [f], name: NAMEA}`, false},
		{"filter with a chained and an unchained reader", 1, 0, `
  - {uid: f, type: filter, from: [src], expr: "v > 100"}
  - {uid: out, type: test-collect, from: [f], name: NAMEA}
  - {uid: out2, type: test-collect, from: [f], name: NAMEB, parallelism: 2, delay: 1ms}`, true},
		{"filter then filter then map", 1, 0, `
  - {uid: f, type: filter, from: [src], expr: "v > 100"}
  - {uid: f2, type: filter, from: [f], expr: 'name != "n3"'}
  - {uid: m, type: map, from: [f2], expr: "{i: idx, x: extra}"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}
  - {uid: out2, type: test-collect, from: [f2], name: NAMEB}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			wi, wa, wb, wr := runReview(t, false, c.par, c.bad, c.ops)
			require.Zero(t, wr)
			require.Equal(t, api.StateFinished, wi.State, wi.Error)
			gi, ga, gb, gr := runReview(t, true, c.par, c.bad, c.ops)
			require.Equal(t, api.StateFinished, gi.State, gi.Error)
			require.Equal(t, c.recycles, gr > 0, "recycled %d times", gr)
			require.NotEmpty(t, wa)
			require.Equal(t, wa, ga)
			require.Equal(t, wb, gb)
		})
	}
}

// A failing record's message names it as it was, not as recycled.
func TestRecycledRecordFailureNamesTheRecord(t *testing.T) {
	for _, ops := range []string{`
  - {uid: f, type: filter, from: [src], expr: "v > 100"}
  - {uid: out, type: test-collect, from: [f], name: NAMEA}`, `
  - {uid: m, type: map, from: [src], expr: "{i: idx}"}
  - {uid: out, type: test-collect, from: [m], name: NAMEA}`} {
		info, _, _, recycled := runReview(t, true, 1, 1000, ops)
		require.Equal(t, api.StateFailed, info.State)
		require.Contains(t, info.Error, "oops 999", "recycled %d", recycled)
		require.NotContains(t, info.Error, "XXX")
	}
}
