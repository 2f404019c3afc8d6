package spectest

import (
	"slices"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// memorySource is a test's source: it emits the test's records one per
// Poll, so the engine takes the watermark after each (it declares
// watermarks: engine.DeclaredWatermarks), and declares the test's
// watermark entries where they are. At the end it ends its input (a
// bounded source) or, for a test without end of input, reports that all
// was emitted and waits to be stopped.
type memorySource struct {
	items     []item
	end       bool
	delivered func() // called once everything was emitted (end false)
	ctx       *runtime.Context
	pos       int
	wm        int64
	hasWM     bool
}

var _ engine.DeclaredWatermarks = (*memorySource)(nil)

func (s *memorySource) Open(ctx *runtime.Context) error { s.ctx = ctx; return nil }
func (s *memorySource) Close() error                    { return nil }

// SnapshotState keeps nothing: a test's job does not restart (its restart
// strategy is none) and is never restored.
func (s *memorySource) SnapshotState(int64) error { return nil }

func (s *memorySource) Poll(b *runtime.Batch) error {
	if s.pos < len(s.items) {
		it := s.items[s.pos]
		s.pos++
		if it.watermark {
			s.wm, s.hasWM = it.ts, true
			return nil
		}
		b.Records = append(b.Records, runtime.Record{Key: it.key, Value: it.value, Timestamp: it.ts})
		return nil
	}
	if s.end {
		return runtime.ErrEndOfInput
	}
	if s.delivered != nil {
		s.delivered()
		s.delivered = nil
	}
	t := time.NewTimer(20 * time.Millisecond)
	defer t.Stop()
	select {
	case <-s.ctx.Wakeup():
	case <-s.ctx.Done():
	case <-t.C:
	}
	return nil
}

func (s *memorySource) DeclaredWatermark() (int64, bool) {
	wm, ok := s.wm, s.hasWM
	s.hasWM = false
	return wm, ok
}

// sourceDef is the definition a test's source runs with instead of its
// own, def. Its plan keeps what wires the source into the job (side
// outputs, onError, keyed output, the timestamp policy) from own, the plan
// the source's own Configure made when the spec was loaded (calling it
// again would only repeat its work: a nexmark source builds its generator).
func sourceDef(def runtime.Definition, own *runtime.Plan, items []item, end bool, delivered func()) runtime.Definition {
	def.Configure = func(*runtime.ConfigContext) *runtime.Plan {
		// The engine adds the side output of onError: sideOutput again.
		side := slices.DeleteFunc(slices.Clone(own.SideOutputs), func(s string) bool { return s == runtime.ErrorOutput })
		return &runtime.Plan{Bounded: end, SideOutputs: side, OnError: own.OnError,
			KeyedOutput: own.KeyedOutput, KeyExpr: own.KeyExpr, SkipBadTimestamps: own.SkipBadTimestamps,
			NewSource: func() runtime.Source { return &memorySource{items: items, end: end, delivered: delivered} }}
	}
	return def
}

// collector keeps what a test's sinks received, by sink uid, in the order
// it arrived.
type collector struct {
	mu   sync.Mutex
	rows map[string][]Row
}

func (c *collector) add(uid string, b *runtime.Batch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range b.Records {
		c.rows[uid] = append(c.rows[uid], received(r.Key, r.Value, r.Timestamp))
	}
}

func (c *collector) get(uid string) []Row {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rows[uid]
}

type memorySink struct {
	uid string
	c   *collector
}

func (s *memorySink) Open(*runtime.Context) error { return nil }
func (s *memorySink) Close() error                { return nil }

func (s *memorySink) Process(b *runtime.Batch, _ runtime.Output) error {
	s.c.add(s.uid, b)
	return nil
}

// sinkDef is the definition a test's sink runs with instead of its own,
// def; own is the plan the sink's own Configure made (what wires it:
// onError).
func sinkDef(def runtime.Definition, own *runtime.Plan, c *collector) runtime.Definition {
	def.Configure = func(cc *runtime.ConfigContext) *runtime.Plan {
		uid := cc.Op.UID
		// It reads every record during Process (received copies it).
		return &runtime.Plan{InputValues: runtime.ValuesDropped, OnError: own.OnError,
			NewOperator: func() runtime.Operator { return &memorySink{uid: uid, c: c} }}
	}
	return def
}
