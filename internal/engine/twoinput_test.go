package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// The two-input alignment test drives two sources by hand. Source "b"
// emits b-before, then, once it has injected the barrier of a savepoint,
// b-after records. Source "a" is held in its first Poll until the test lets
// it go, so its barrier comes after its a-before records, which it emits
// when released, while b's barrier already waits at the operator. The
// two-input operator logs what it processes and when it snapshots.
type alignScript struct {
	mu       sync.Mutex
	log      []string
	releaseA chan struct{}
	bBarrier chan struct{} // closed when b snapshotted (its barrier is next)
	bAfter   chan struct{} // closed when b sent its b-after records
}

var (
	scriptsMu sync.Mutex
	scripts   = map[string]*alignScript{}
)

func scriptOf(name string) *alignScript {
	scriptsMu.Lock()
	defer scriptsMu.Unlock()
	return scripts[name]
}

func (s *alignScript) add(entry string) {
	s.mu.Lock()
	s.log = append(s.log, entry)
	s.mu.Unlock()
}

func (s *alignScript) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

type alignSource struct {
	s     *alignScript
	side  string
	polls int
	snap  bool
	sent  bool
}

func (a *alignSource) Open(*runtime.Context) error { return nil }
func (a *alignSource) Close() error                { return nil }

func (a *alignSource) SnapshotState(int64) error {
	if a.side == "b" && !a.snap {
		a.snap = true
		close(a.s.bBarrier)
	}
	return nil
}

func (a *alignSource) Poll(b *runtime.Batch) error {
	a.polls++
	emit := func(what string, n int) {
		for i := 0; i < n; i++ {
			b.Records = append(b.Records, runtime.Record{Value: fmt.Appendf(nil, "%s-%s-%d", a.side, what, i)})
		}
	}
	switch {
	case a.side == "a" && a.polls == 1:
		<-a.s.releaseA
		emit("before", 5)
	case a.side == "a" && a.polls == 2:
		emit("after", 5)
	case a.side == "b" && a.polls == 1:
		emit("before", 5)
	case a.side == "b" && a.snap && !a.sent:
		a.sent = true
		emit("after", 5)
		defer close(a.s.bAfter)
	default:
		time.Sleep(time.Millisecond)
	}
	return nil
}

type alignOp struct{ s *alignScript }

func (o alignOp) Open(*runtime.Context) error { return nil }
func (o alignOp) Close() error                { return nil }

func (o alignOp) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		side := string(r.Value[:1])
		if want := map[string]int{"a": 0, "b": 1}[side]; b.Input != want {
			return fmt.Errorf("record %s came as input %d, want %d", r.Value, b.Input, want)
		}
		o.s.add(string(r.Value))
		out.Emit(r)
	}
	return nil
}

func (o alignOp) SnapshotState(int64) error {
	o.s.add("snapshot")
	return nil
}

func alignDefs() []runtime.Definition {
	src := runtime.Definition{Type: "test-align-src", Kind: api.KindSource, Doc: "alignment test source",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			var o struct {
				Script string `yaml:"script"`
				Side   string `yaml:"side"`
			}
			c.Decode(&o)
			return &runtime.Plan{NewSource: func() runtime.Source { return &alignSource{s: scriptOf(o.Script), side: o.Side} }}
		}}
	op := runtime.Definition{Type: "test-align-op", Kind: api.KindOperator, Doc: "alignment test operator",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			var o struct {
				Script string `yaml:"script"`
			}
			c.Decode(&o)
			return &runtime.Plan{NewOperator: func() runtime.Operator { return alignOp{s: scriptOf(o.Script)} }}
		}}
	return []runtime.Definition{src, op}
}

// A barrier that arrived on one input of a two-input operator blocks only
// that input in exactly-once mode: the other input's records before its
// barrier are processed while the first input's records after the barrier
// wait, so the snapshot has every record before the barrier of each input
// and none after. In at-least-once mode nothing waits.
func TestBarrierOnOneInputBlocksOnlyThatInput(t *testing.T) {
	for _, mode := range []string{"exactly-once", "at-least-once"} {
		t.Run(mode, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			s := &alignScript{releaseA: make(chan struct{}), bBarrier: make(chan struct{}), bAfter: make(chan struct{})}
			scriptsMu.Lock()
			scripts[name] = s
			scriptsMu.Unlock()
			spec := fmt.Sprintf(`
name: align
checkpointing: {interval: 1h, mode: %s}
operators:
  - {uid: a, type: test-align-src, script: %s, side: a}
  - {uid: b, type: test-align-src, script: %s, side: b}
  - {uid: op, type: test-align-op, from: [a, b], script: %s}
  - {uid: out, type: discard, from: [op]}
`, mode, name, name, name)
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: append(testTypes, alignDefs()...), CheckpointsDir: t.TempDir()})
			defer runtimetest.Cancel(t, 20*time.Second, j)
			runtimetest.WaitUntil(t, 10*time.Second, "b-before processed", func() bool { return len(s.entries()) == 5 })
			done := make(chan error, 1)
			go func() {
				_, _, err := j.Savepoint(t.TempDir())
				done <- err
			}()
			<-s.bBarrier
			<-s.bAfter
			if mode == "at-least-once" {
				// Nothing blocks b: its records after the barrier go first.
				runtimetest.WaitUntil(t, 10*time.Second, "b-after processed", func() bool { return len(s.entries()) == 10 })
			} else {
				time.Sleep(50 * time.Millisecond) // b-after would be processed now if b were not blocked
			}
			close(s.releaseA)
			require.NoError(t, <-done)
			runtimetest.WaitUntil(t, 10*time.Second, "everything processed", func() bool { return len(s.entries()) == 21 })
			log := strings.Join(s.entries(), " ")
			var want string
			if mode == "exactly-once" {
				want = "b-before-0 b-before-1 b-before-2 b-before-3 b-before-4 " +
					"a-before-0 a-before-1 a-before-2 a-before-3 a-before-4 snapshot"
			} else {
				want = "b-before-0 b-before-1 b-before-2 b-before-3 b-before-4 " +
					"b-after-0 b-after-1 b-after-2 b-after-3 b-after-4 " +
					"a-before-0 a-before-1 a-before-2 a-before-3 a-before-4 snapshot"
			}
			require.True(t, strings.HasPrefix(log, want), "log %s\nwant prefix %s", log, want)
		})
	}
}
