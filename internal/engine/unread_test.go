package engine_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// unreadOp claims runtime.ValuesUnread. It emits, for each record, "1"
// when the record came with its Value and "0" when it came without, and
// echoes the record as it is to its side output echo, which may carry
// Values on (as a window's late output does).
type unreadOp struct{}

func (unreadOp) Open(*runtime.Context) error { return nil }
func (unreadOp) Close() error                { return nil }

func (unreadOp) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		seen := []byte("0")
		if r.Value != nil {
			seen = []byte("1")
		}
		out.Emit(runtime.Record{Key: r.Key, Value: seen, Timestamp: r.Timestamp})
		out.EmitTo("echo", r)
	}
	return nil
}

// An operator that reads no Values (ValuesUnread) gets records without
// them on the edges off a chain (keyed, rebalanced), unless one of its
// side outputs is read: then it gets them whole, and what it forwards
// there arrives intact, from a source that overwrites its Values once its
// chain is done with them. In a chain (a keyed one too, at parallelism 1)
// it gets them as they are (sparing them would save nothing).
func TestValuesUnreadAreNotSent(t *testing.T) {
	const count = 5000
	for _, c := range []struct {
		name, ops string
		seen      string // what u emits for each record: "1" with its Value, "0" without
		recycles  bool
	}{
		{"chained", `
  - {uid: u, type: test-unread, from: [src]}
  - {uid: out, type: test-collect, from: [u], name: NAME}`, "1", true},
		{"keyed", `
  - {uid: key, type: keyBy, from: [src], expr: "idx % 7"}
  - {uid: u, type: test-unread, from: [key], keyed: true, parallelism: 2}
  - {uid: out, type: test-collect, from: [u], name: NAME}`, "0", true},
		{"keyed, chained at parallelism 1", `
  - {uid: key, type: keyBy, from: [src], expr: "idx % 7"}
  - {uid: u, type: test-unread, from: [key], keyed: true}
  - {uid: out, type: test-collect, from: [u], name: NAME}`, "1", true},
		{"on another parallelism", `
  - {uid: u, type: test-unread, from: [src], parallelism: 2}
  - {uid: out, type: test-collect, from: [u], name: NAME}`, "0", false},
		{"keyed, its side output read", `
  - {uid: key, type: keyBy, from: [src], expr: "idx % 7"}
  - {uid: u, type: test-unread, from: [key], keyed: true}
  - {uid: out, type: test-collect, from: [u], name: NAME}
  - {uid: echo, type: test-collect, from: [u.echo], name: NAME-echo}`, "1", true},
		{"chained, its side output read on another goroutine", `
  - {uid: u, type: test-unread, from: [src]}
  - {uid: out, type: test-collect, from: [u], name: NAME}
  - {uid: echo, type: test-collect, from: [u.echo], name: NAME-echo, parallelism: 2}`, "1", true},
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
			unread := runtime.Definition{Type: "test-unread", Kind: api.KindOperator, Doc: "test only",
				Configure: func(cc *runtime.ConfigContext) *runtime.Plan {
					var o struct {
						Keyed bool `yaml:"keyed"`
					}
					cc.Decode(&o)
					return &runtime.Plan{KeyedInput: o.Keyed, InputValues: runtime.ValuesUnread, SideOutputs: []string{"echo"},
						NewOperator: func() runtime.Operator { return unreadOp{} }}
				}}
			name := runtimetest.UniqueName(t)
			spec := "name: unread\nparallelism: 1\nchaining: true\noperators:\n  - {uid: src, type: test-recycling}" +
				strings.ReplaceAll(c.ops, "NAME", name) + "\n"
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src, unread})})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			require.Equal(t, c.recycles, recycled.Load() > 0, "recycled")

			require.Equal(t, slices.Repeat([]string{c.seen}, count), runtimetest.Values(name))
			if !strings.Contains(c.ops, "u.echo") {
				return
			}
			got := runtimetest.Values(name + "-echo")
			sort.Slice(got, func(a, b int) bool { return len(got[a]) < len(got[b]) || len(got[a]) == len(got[b]) && got[a] < got[b] })
			want := make([]string, count)
			for i := range want {
				want[i] = fmt.Sprintf(`{"idx":%d}`, i)
			}
			require.Equal(t, want, got)
		})
	}
}
