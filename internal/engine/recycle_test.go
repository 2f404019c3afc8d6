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

// recyclingSource emits {"idx":N} for N < count from an arena, and when
// told its Values are dead (RecycleValues) first overwrites every one of
// them with 'X', then rewinds the arena: a reader that kept one, or read
// it after the recycling, sees garbage.
type recyclingSource struct {
	count    int
	next     int
	arena    runtime.Arena
	emitted  [][]byte
	recycled *atomic.Int64
}

func (s *recyclingSource) Open(*runtime.Context) error { return nil }
func (s *recyclingSource) Close() error                { return nil }
func (s *recyclingSource) SnapshotState(int64) error   { return nil }

func (s *recyclingSource) Poll(b *runtime.Batch) error {
	for ; s.next < s.count && len(b.Records) < cap(b.Records); s.next++ {
		v := s.arena.Append(32, func(d []byte) []byte { return fmt.Appendf(d, `{"idx":%d}`, s.next) })
		s.emitted = append(s.emitted, v)
		b.Records = append(b.Records, runtime.Record{Value: v})
	}
	if s.next == s.count {
		return runtime.ErrEndOfInput
	}
	return nil
}

func (s *recyclingSource) RecycleValues() {
	for _, v := range s.emitted {
		for i := range v {
			v[i] = 'X'
		}
	}
	s.emitted = s.emitted[:0]
	s.recycled.Add(1)
	s.arena.Rewind()
}

// The engine lets a source reuse its Values' bytes only when nothing reads
// them after its chain has handled their batch: its reader chained, and
// each operator in the chain dropping them (map, discard, a sink that
// copies) or forwarding them (filter, keyBy) to such operators or off the
// chain, which gets copies. Where it does, the results are whole; where
// an operator in the chain might keep them, it never does.
func TestSourceValuesRecycledOnlyWhenNothingKeepsThem(t *testing.T) {
	const count = 20000
	for _, c := range []struct {
		name, chaining, ops string
		recycles            bool
	}{
		{"filter map sink", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: m, type: map, from: [odd], expr: "{i: idx}"}
  - {uid: out, type: test-collect, from: [m], name: NAME}`, true},
		{"filter sink", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: out, type: test-collect, from: [odd], name: NAME}`, true},
		{"two readers", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: m, type: map, from: [odd], expr: "{i: idx}"}
  - {uid: out, type: test-collect, from: [m], name: NAME}
  - {uid: all, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: allOut, type: test-collect, from: [all], name: NAME-all, parallelism: 2}`, true},
		{"unchained", "false", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: out, type: test-collect, from: [odd], name: NAME}`, false},
		{"an operator that claims nothing", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: pass, type: test-pass, from: [odd]}
  - {uid: out, type: test-collect, from: [pass], name: NAME}`, false},
		{"a reader on its own goroutine", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: out, type: test-collect, from: [odd], name: NAME, parallelism: 2}`, true},
		{"a source whose reader is off its chain", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1", parallelism: 2}
  - {uid: out, type: test-collect, from: [odd], name: NAME}`, false},
		{"a keyed reader", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: key, type: keyBy, from: [odd], expr: "idx % 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: NAME}`, true},
		{"a side output and a reader on its own goroutine", "true", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: m, type: map, from: [odd], expr: "{i: idx}"}
  - {uid: out, type: test-collect, from: [m], name: NAME}
  - {uid: all, type: test-collect, from: [odd], name: NAME-all, parallelism: 2}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var recycled atomic.Int64
			src := runtime.Definition{Type: "test-recycling", Kind: api.KindSource, Doc: "test only",
				Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
					cc.Decode(&struct{}{})
					return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source {
						return &recyclingSource{count: count, recycled: &recycled}
					}}
				}}
			name := runtimetest.UniqueName(t)
			spec := "name: recycle\nparallelism: 1\nchaining: " + c.chaining + "\noperators:\n  - {uid: src, type: test-recycling}" +
				strings.ReplaceAll(c.ops, "NAME", name) + "\n"
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src})})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			if c.recycles {
				require.Greater(t, recycled.Load(), int64(count/runtime.DefaultBatchSize/2), "recycled after its batches")
			} else {
				require.Zero(t, recycled.Load())
			}
			got := runtimetest.Values(name)
			if c.name == "a keyed reader" {
				sum := 0
				for _, n := range runtimetest.MaxCounts(t, got) {
					sum += n
				}
				require.Equal(t, count/2, sum)
				return
			}
			odd := func(format string) []string {
				want := make([]string, 0, count/2)
				for i := 1; i < count; i += 2 {
					want = append(want, fmt.Sprintf(format, i))
				}
				return want
			}
			if strings.Contains(c.ops, "type: map") {
				requireSameElements(t, odd(`{"i":%d}`), got)
			} else {
				requireSameElements(t, odd(`{"idx":%d}`), got)
			}
			if strings.Contains(c.ops, "NAME-all") {
				requireSameElements(t, odd(`{"idx":%d}`), runtimetest.Values(name+"-all"))
			}
		})
	}
}

// requireSameElements asserts what testify's ElementsMatch does (the same
// strings, each as many times, in any order) by sorting copies:
// ElementsMatch compares pairs, O(n²), which took seconds for these tests'
// 20,000 values under -race.
func requireSameElements(t *testing.T, want, got []string) {
	t.Helper()
	want, got = slices.Clone(want), slices.Clone(got)
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got)
}
