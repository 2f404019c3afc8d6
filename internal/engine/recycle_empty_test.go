package engine_test

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

type emptySource struct {
	next     int
	arena    runtime.Arena
	recycled *atomic.Int64
}

func (s *emptySource) Open(*runtime.Context) error { return nil }
func (s *emptySource) Close() error                { return nil }
func (s *emptySource) SnapshotState(int64) error   { return nil }
func (s *emptySource) Poll(b *runtime.Batch) error {
	for ; s.next < 10 && len(b.Records) < cap(b.Records); s.next++ {
		v := s.arena.Append(8, func(d []byte) []byte { return d }) // empty, not nil
		b.Records = append(b.Records, runtime.Record{Value: v})
	}
	return runtime.ErrEndOfInput
}
func (s *emptySource) RecycleValues() { s.recycled.Add(1); s.arena.Rewind() }

var (
	nilMu   sync.Mutex
	nilSeen = map[string]int{}
)

type nilSink struct{ name string }

func (s *nilSink) Open(*runtime.Context) error { return nil }
func (s *nilSink) Close() error                { return nil }
func (s *nilSink) Process(b *runtime.Batch, _ runtime.Output) error {
	nilMu.Lock()
	defer nilMu.Unlock()
	for _, r := range b.Records {
		if r.Value == nil {
			nilSeen[s.name]++
		} else {
			nilSeen[s.name+"-empty"]++
		}
	}
	return nil
}

// An empty Value that leaves a recycling source's chain stays empty.
func TestCopiedEmptyValueStaysEmpty(t *testing.T) {
	var recycled atomic.Int64
	src := runtime.Definition{Type: "test-empty-src", Kind: api.KindSource, Doc: "test only",
		Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
			cc.Decode(&struct{}{})
			return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source { return &emptySource{recycled: &recycled} }}
		}}
	sink := runtime.Definition{Type: "test-nil-sink", Kind: api.KindSink, Doc: "test only",
		Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
			var o struct {
				Name string `yaml:"name"`
			}
			cc.Decode(&o)
			return &runtime.Plan{NewOperator: func() runtime.Operator { return &nilSink{name: o.Name} }}
		}}
	for _, chain := range []string{"false", "true"} {
		t.Run(chain, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			spec := "name: empty\nparallelism: 1\nchaining: CHAIN\noperators:\n  - {uid: src, type: test-empty-src}\n" +
				"  - {uid: f, type: filter, from: [src], expr: \"true\"}\n" +
				"  - {uid: out, type: test-nil-sink, from: [f], name: " + name + ", parallelism: 2}\n"
			spec = strings.ReplaceAll(spec, "CHAIN", chain)
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src, sink})})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			require.Equal(t, chain == "true", recycled.Load() > 0)
			nilMu.Lock()
			defer nilMu.Unlock()
			require.Equal(t, 10, nilSeen[name+"-empty"], "nil: %d", nilSeen[name])
		})
	}
}
