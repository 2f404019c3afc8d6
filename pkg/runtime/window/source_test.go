package window_test

import (
	"fmt"
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// event is one input record of the tests: record i of a deterministic
// stream, so a reference can be computed from the indices alone.
type event struct {
	I      int64
	Key    string
	Amount int64
	TS     int64
}

// gen describes the test stream: n records over keys keys, shuffled in
// blocks of block records: block b's records carry the event times
// b*block*step … (b*block+block-1)*step in a pseudo-random order, so every
// timestamp is distinct and none is more than block*step out of order.
// Every lateEvery-th record (if set) is lateBy further back.
type gen struct {
	N, Step, Block, Keys, LateEvery, LateBy int64
	ts                                      []int64
}

func mix(x uint64) uint64 { // splitmix64
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func newGen(g gen) gen {
	g.ts = make([]int64, g.N)
	block := max(g.Block, 1)
	for b := int64(0); b*block < g.N; b++ {
		lo, hi := b*block, min((b+1)*block, g.N)
		perm := make([]int64, hi-lo)
		for k := range perm {
			perm[k] = lo + int64(k)
		}
		for k := len(perm) - 1; k > 0; k-- { // Fisher-Yates, seeded by the block
			j := int(mix(uint64(b)<<20|uint64(k)) % uint64(k+1))
			perm[k], perm[j] = perm[j], perm[k]
		}
		for k, v := range perm {
			g.ts[lo+int64(k)] = v * g.Step
		}
	}
	return g
}

// bound is how far out of order the stream is (its maxOutOfOrderness).
func (g gen) bound() int64 { return max(g.Block, 1) * g.Step }

func (g gen) event(i int64) event {
	h := mix(uint64(i) + 1)
	ts := g.ts[i]
	if g.LateEvery > 0 && i > 0 && i%g.LateEvery == 0 {
		ts -= g.LateBy
	}
	return event{I: i, Key: fmt.Sprintf("k%d", mix(h)%uint64(g.Keys)), Amount: int64(mix(h^7) % 100), TS: ts}
}

func (g gen) all() []event {
	out := make([]event, g.N)
	for i := range out {
		out[i] = g.event(int64(i))
	}
	return out
}

// testSource emits the stream gen cut into a fixed number of splits: split
// j holds the records i with i % splits == j, in order of i; subtask s of p
// reads the splits j with j % p == s, perPoll records per poll with a pause
// between polls (so watermarks go out between them). Each split's position
// is kept in checkpoints, so a restore at another parallelism deals the
// splits out again.
type testSource struct {
	g       gen
	splits  int64
	perPoll int
	pause   time.Duration
	ctx     *runtime.Context
	next    map[int64]int64 // split -> next index
	order   []int64
	cur     int
}

func testSourceDef() runtime.Definition {
	return runtime.Definition{Type: "test-events", Kind: api.KindSource, Doc: "window tests' event stream",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			var o struct {
				N         int64        `yaml:"n"`
				Step      int64        `yaml:"step"`
				Block     int64        `yaml:"block"`
				Keys      int64        `yaml:"keys"`
				LateEvery int64        `yaml:"lateEvery"`
				LateBy    int64        `yaml:"lateBy"`
				Splits    int64        `yaml:"splits"`
				PerPoll   int          `yaml:"perPoll"`
				Pause     api.Duration `yaml:"pause"`
			}
			c.Decode(&o)
			if o.Splits == 0 {
				o.Splits = 4
			}
			g := newGen(gen{N: o.N, Step: o.Step, Block: o.Block, Keys: o.Keys, LateEvery: o.LateEvery, LateBy: o.LateBy})
			return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source {
				return &testSource{g: g, splits: o.Splits, perPoll: o.PerPoll, pause: o.Pause.D()}
			}}
		}}
}

func (s *testSource) Open(ctx *runtime.Context) error {
	s.ctx, s.next = ctx, map[int64]int64{}
	restored := ctx.OperatorState().Get("next")
	for _, it := range restored {
		d := state.NewDecoder("test-events", it, 1)
		split, next := d.Varint(), d.Varint()
		if err := d.Finish(); err != nil {
			return err
		}
		if int(split)%ctx.Parallelism() == ctx.Subtask() {
			s.next[split] = next
		}
	}
	if restored == nil {
		for j := int64(ctx.Subtask()); j < s.splits; j += int64(ctx.Parallelism()) {
			s.next[j] = j
		}
	}
	for j := range s.next {
		s.order = append(s.order, j)
	}
	slices.Sort(s.order)
	return nil
}

func (s *testSource) Splits(dst []uint32) []uint32 {
	for _, j := range s.order {
		if s.next[j] < s.g.N {
			dst = append(dst, uint32(j))
		}
	}
	return dst
}

func (s *testSource) Poll(b *runtime.Batch) error {
	if s.pause > 0 {
		time.Sleep(s.pause)
	}
	for n := 0; (s.perPoll == 0 || n < s.perPoll) && len(b.Records) < cap(b.Records); n++ {
		j, ok := s.nextSplit()
		if !ok {
			return runtime.ErrEndOfInput
		}
		e := s.g.event(s.next[j])
		b.Records = append(b.Records, runtime.Record{
			Value:     fmt.Appendf(nil, `{"i":%d,"user":%q,"amount":%d,"ts":%d}`, e.I, e.Key, e.Amount, e.TS),
			Timestamp: e.TS, Split: uint32(j)})
		s.next[j] += s.splits
	}
	return nil
}

// nextSplit picks the splits round robin, skipping exhausted ones.
func (s *testSource) nextSplit() (int64, bool) {
	for range s.order {
		j := s.order[s.cur%len(s.order)]
		s.cur++
		if s.next[j] < s.g.N {
			return j, true
		}
	}
	return 0, false
}

func (s *testSource) SnapshotState(int64) error {
	var items [][]byte
	for _, j := range s.order {
		e := state.NewEncoder(1)
		e.Varint(j)
		e.Varint(s.next[j])
		items = append(items, e.Encoded())
	}
	s.ctx.OperatorState().Set("next", state.Union, items)
	return nil
}

func (s *testSource) Close() error { return nil }
