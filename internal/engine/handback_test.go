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

// pollRecyclingSource is recyclingSource that also takes back the Values
// of its first Polls (runtime.PollRecycler): it overwrites each of them
// with 'X' at once, so a reader that reads one afterwards sees garbage.
type pollRecyclingSource struct {
	recyclingSource
	polls  int64
	byPoll [][][]byte // the Values of each Poll not taken back, from poll first
	first  int64
	upTo   *atomic.Int64
}

func (s *pollRecyclingSource) Poll(b *runtime.Batch) error {
	s.polls++
	n := len(b.Records)
	err := s.recyclingSource.Poll(b)
	var vs [][]byte
	for _, r := range b.Records[n:] {
		vs = append(vs, r.Value)
	}
	s.byPoll = append(s.byPoll, vs)
	s.emitted = s.emitted[:0] // the arena is never rewound: each Value stays its own
	return err
}

func (s *pollRecyclingSource) RecycleValuesUpTo(polls int64) {
	for ; s.first < polls; s.first++ {
		for _, v := range s.byPoll[0] {
			for i := range v {
				v[i] = 'X'
			}
		}
		s.byPoll = s.byPoll[1:]
	}
	s.upTo.Add(1)
}

// Off the chain (a job that does not chain, or a reader that cannot), a
// source's readers on other goroutines hand its Values back by counting
// the batches they are done with: where its records go one to one to a
// reader that drops their Values, through readers that forward them, the
// source learns which of its Polls no reader reads any more, and the
// results are whole though each taken-back Value is overwritten at once.
// Where a reader may keep them or they go elsewhere, nothing is taken back.
func TestSourceValuesHandedBackAcrossGoroutines(t *testing.T) {
	const count = 20000
	for _, c := range []struct {
		name, ops string
		handsBack bool
	}{
		{"sink", `
  - {uid: out, type: test-collect, from: [src], name: NAME, delay: 200us}`, true},
		{"filter sink", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: out, type: test-collect, from: [odd], name: NAME, delay: 200us}`, true},
		{"filter filter sink", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: all, type: filter, from: [odd], expr: "idx >= 0"}
  - {uid: out, type: test-collect, from: [all], name: NAME, delay: 200us}`, true},
		{"an operator that claims nothing", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: pass, type: test-pass, from: [odd]}
  - {uid: out, type: test-collect, from: [pass], name: NAME}`, false},
		{"two readers", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1"}
  - {uid: out, type: test-collect, from: [odd], name: NAME}
  - {uid: other, type: discard, from: [src]}`, false},
		{"a rebalanced reader", `
  - {uid: odd, type: filter, from: [src], expr: "idx % 2 == 1", parallelism: 2}
  - {uid: out, type: test-collect, from: [odd], name: NAME}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var recycled, upTo atomic.Int64
			src := runtime.Definition{Type: "test-poll-recycling", Kind: api.KindSource, Doc: "test only",
				Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
					cc.Decode(&struct{}{})
					return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source {
						return &pollRecyclingSource{recyclingSource: recyclingSource{count: count, recycled: &recycled}, upTo: &upTo}
					}}
				}}
			name := runtimetest.UniqueName(t)
			spec := "name: handback\nparallelism: 1\noperators:\n  - {uid: src, type: test-poll-recycling}" +
				strings.ReplaceAll(c.ops, "NAME", name) + "\n"
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src})})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			require.Zero(t, recycled.Load(), "nothing is chained")
			if c.handsBack {
				require.Greater(t, upTo.Load(), int64(2), "Values taken back while the job ran")
			} else {
				require.Zero(t, upTo.Load())
			}
			var want []string
			for i := range count {
				if i%2 == 1 || c.name == "sink" {
					want = append(want, fmt.Sprintf(`{"idx":%d}`, i))
				}
			}
			requireSameElements(t, want, runtimetest.Values(name))
		})
	}
}

// A filter hands on a batch whose records it keeps, moved to its front, as
// it is (runtime.BatchForwarder) when it keeps at least half of them, and
// emits them one by one otherwise; at a record it cannot evaluate (every
// 97th is not JSON) it emits those kept before it and goes on one by one.
// Either way its reader gets the records kept, in order, and the dead
// letters.
func TestFilterForwardsKeptRecordsInOrder(t *testing.T) {
	const count, bad = 20000, 97
	for _, c := range []struct {
		name string
		keep func(i int) bool
		expr string
	}{
		{"most kept", func(i int) bool { return i%3 != 0 }, "idx % 3 != 0"},
		{"few kept", func(i int) bool { return i%10 == 0 }, "idx % 10 == 0"},
	} {
		for _, chaining := range []string{"false", "true"} {
			t.Run(c.name+" chaining "+chaining, func(t *testing.T) {
				src := runtime.Definition{Type: "test-review", Kind: api.KindSource, Doc: "test only",
					Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
						cc.Decode(&struct{}{})
						return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source {
							return &reviewSource{count: count, bad: bad}
						}}
					}}
				name := runtimetest.UniqueName(t)
				spec := fmt.Sprintf(`name: forward
chaining: %s
operators:
  - {uid: src, type: test-review}
  - {uid: f, type: filter, from: [src], expr: "%s", onError: sideOutput}
  - {uid: out, type: test-collect, from: [f], name: %s}
  - {uid: dead, type: test-collect, from: [f.errors], name: %s-dead}
`, chaining, c.expr, name, name)
				j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src})})
				require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
				var want []string
				dead := 0
				for i := range count {
					switch {
					case i%bad == bad-1:
						dead++
					case c.keep(i):
						want = append(want, reviewRecord(i, bad))
					}
				}
				require.Equal(t, want, runtimetest.Values(name), "in order")
				require.Len(t, runtimetest.Values(name+"-dead"), dead)
			})
		}
	}
}
