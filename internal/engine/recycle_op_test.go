package engine_test

import (
	"encoding/json"
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

// recyclingMap emits a copy of each record's Value from its arena, and
// when told its Values are dead (RecycleValues) first overwrites every one
// of them with 'X': a reader that kept one, or read it later, sees garbage.
type recyclingMap struct {
	arena    runtime.Arena
	emitted  [][]byte
	recycled *atomic.Int64
}

func (m *recyclingMap) Open(*runtime.Context) error { return nil }
func (m *recyclingMap) Close() error                { return nil }

func (m *recyclingMap) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		r.Value = m.arena.Copy(r.Value)
		m.emitted = append(m.emitted, r.Value)
		out.Emit(r)
	}
	return nil
}

func (m *recyclingMap) RecycleValues() {
	for _, v := range m.emitted {
		for i := range v {
			v[i] = 'X'
		}
	}
	m.emitted = m.emitted[:0]
	m.recycled.Add(1)
	m.arena.Rewind()
}

// An operator in a source's chain may reuse the bytes of the Values it
// emits (a map's results) under the source's rule: every reader of it in
// the chain, each reader there dropping them or forwarding them, and what
// leaves the chain copied. Where it may, the results are whole; where a
// reader might keep them, it is never told to.
func TestOperatorValuesRecycledOnlyWhenNothingKeepsThem(t *testing.T) {
	const count = 20000
	for _, c := range []struct {
		name, chaining, ops string
		recycles            bool
	}{
		{"map sink", "true", `
  - {uid: pm, type: test-recycling-map, from: [src]}
  - {uid: out, type: test-collect, from: [pm], name: NAME}`, true},
		{"a filter read off the chain", "true", `
  - {uid: pm, type: test-recycling-map, from: [src]}
  - {uid: f, type: filter, from: [pm], expr: "idx >= 0"}
  - {uid: out, type: test-collect, from: [f], name: NAME, parallelism: 2}`, true},
		{"a keyBy to a window", "true", `
  - {uid: pm, type: test-recycling-map, from: [src]}
  - {uid: key, type: keyBy, from: [pm], expr: "idx % 7"}
  - {uid: w, type: window, from: [key], window: {type: tumbling, size: 1h}, time: processing, aggregate: {n: count(), top: max(idx)}}
  - {uid: out, type: test-collect, from: [w], name: NAME}`, true},
		{"a reader off the chain", "true", `
  - {uid: pm, type: test-recycling-map, from: [src]}
  - {uid: out, type: test-collect, from: [pm], name: NAME, parallelism: 2}`, false},
		{"a reader in the chain and one off it", "true", `
  - {uid: pm, type: test-recycling-map, from: [src]}
  - {uid: out, type: test-collect, from: [pm], name: NAME}
  - {uid: all, type: test-collect, from: [pm], name: NAME-all, parallelism: 2}`, false},
		{"an operator that claims nothing", "true", `
  - {uid: pm, type: test-recycling-map, from: [src]}
  - {uid: pass, type: test-pass, from: [pm]}
  - {uid: out, type: test-collect, from: [pass], name: NAME}`, false},
		{"unchained", "false", `
  - {uid: pm, type: test-recycling-map, from: [src]}
  - {uid: out, type: test-collect, from: [pm], name: NAME}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var srcRecycled, recycled atomic.Int64
			src := runtime.Definition{Type: "test-recycling", Kind: api.KindSource, Doc: "test only",
				Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
					cc.Decode(&struct{}{})
					return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source {
						return &recyclingSource{count: count, recycled: &srcRecycled}
					}}
				}}
			pm := runtime.Definition{Type: "test-recycling-map", Kind: api.KindOperator, Doc: "test only",
				Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
					cc.Decode(&struct{}{})
					return &runtime.Plan{InputValues: runtime.ValuesDropped,
						NewOperator: func() runtime.Operator { return &recyclingMap{recycled: &recycled} }}
				}}
			name := runtimetest.UniqueName(t)
			spec := "name: recycle\nparallelism: 1\nchaining: " + c.chaining + "\noperators:\n  - {uid: src, type: test-recycling}" +
				strings.ReplaceAll(c.ops, "NAME", name) + "\n"
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src, pm})})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			if c.recycles {
				require.Greater(t, recycled.Load(), int64(count/runtime.DefaultBatchSize/2), "recycled after its batches")
			} else {
				require.Zero(t, recycled.Load())
			}
			got := runtimetest.Values(name)
			if strings.Contains(c.ops, "window") {
				n, top := 0, 0
				for _, v := range got {
					var r struct{ N, Top int }
					require.NoError(t, json.Unmarshal([]byte(v), &r), v)
					n, top = n+r.N, max(top, r.Top)
				}
				require.Equal(t, count, n)
				require.Equal(t, count-1, top)
				return
			}
			want := make([]string, count)
			for i := range want {
				want[i] = fmt.Sprintf(`{"idx":%d}`, i)
			}
			requireSameElements(t, want, got)
			if strings.Contains(c.ops, "NAME-all") {
				requireSameElements(t, want, runtimetest.Values(name+"-all"))
			}
		})
	}
}
