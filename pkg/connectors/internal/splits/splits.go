// Package splits is the position of a source that emits a sequence of
// indices cut into splits (datagen, nexmark): split s of S holds start+s,
// start+s+S, … . S is the parallelism of the job's first run and never
// changes, so a restore at another parallelism deals the splits out again
// (split s to subtask s mod parallelism) and each continues where it was.
package splits

import (
	"strconv"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Split is one split: its id of Of, and the next index it emits.
type Split struct {
	ID, Of, Next int64
}

// Version is the format of an encoded split.
const Version = 1

// Encode is the split as a versioned state item: id, of, next.
func (s Split) Encode() []byte {
	e := state.NewEncoder(Version)
	e.Varint(s.ID)
	e.Varint(s.Of)
	e.Varint(s.Next)
	return e.Encoded()
}

// Decode reads an item of Encode; what names the source in errors.
func Decode(what string, b []byte) (Split, error) {
	return Check(state.NewDecoder(what, b, Version))
}

// Check reads a split from d and checks it (a decoder of another layout
// may share it).
func Check(d *state.Decoder) (Split, error) {
	s := Split{ID: d.Varint(), Of: d.Varint(), Next: d.Varint()}
	if d.Err() == nil && (s.Of < 1 || s.ID < 0 || s.ID >= s.Of) {
		d.Fail("split %d of %d", s.ID, s.Of)
	}
	return s, d.Finish()
}

// Set is one subtask's splits, emitted round robin.
type Set struct {
	splits []Split
	end    int64 // the first index past the end
	cur    int
}

// Unbounded is the end of a sequence without one.
const Unbounded = 1<<63 - 1

// Open returns the subtask's splits of the indices [start, end): of those
// restored (nil: none were), the ones dealt to this subtask; on a fresh
// start (or for a source new to a restored job), split Subtask of
// Parallelism.
func Open(ctx *runtime.Context, restored []Split, start, end int64) *Set {
	s := &Set{end: end}
	if restored != nil {
		for _, sp := range restored {
			if int(sp.ID)%ctx.Parallelism() == ctx.Subtask() {
				s.splits = append(s.splits, sp)
			}
		}
	} else if !ctx.Restored() || ctx.OperatorState().Empty() {
		n := int64(ctx.Parallelism())
		s.splits = []Split{{ID: int64(ctx.Subtask()), Of: n, Next: advance(start, int64(ctx.Subtask()), end)}}
	}
	return s
}

// Next returns the next index and its split, taking the splits in turn;
// ok is false once every split is exhausted.
func (s *Set) Next() (idx int64, split uint32, ok bool) {
	for len(s.splits) > 0 {
		sp := &s.splits[s.cur]
		if sp.Next >= s.end {
			s.splits = append(s.splits[:s.cur], s.splits[s.cur+1:]...)
			s.cur = 0
			continue
		}
		idx, split = sp.Next, uint32(sp.ID)
		sp.Next = advance(idx, sp.Of, s.end)
		if s.cur++; s.cur >= len(s.splits) {
			s.cur = 0
		}
		return idx, split, true
	}
	return 0, 0, false
}

// Active appends the splits not exhausted yet (runtime.SplitSource).
func (s *Set) Active(dst []uint32) []uint32 {
	for _, sp := range s.splits {
		if sp.Next < s.end {
			dst = append(dst, uint32(sp.ID))
		}
	}
	return dst
}

// Snapshot records the splits in list of the operator state.
func (s *Set) Snapshot(ctx *runtime.Context, list string) {
	items := make([][]byte, len(s.splits))
	for i, sp := range s.splits {
		items[i] = sp.Encode()
	}
	ctx.OperatorState().Set(list, state.Union, items)
}

// Next indexes by split, for savepoint inspect.
func (s *Set) Describe() map[string]int64 {
	next := map[string]int64{}
	for _, sp := range s.splits {
		next[strconv.FormatInt(sp.ID, 10)] = sp.Next
	}
	return next
}

// Pacer paces a source at rate records/s over all its subtasks (0: as
// fast as possible), by the wall clock since Start.
type Pacer struct {
	Rate    float64
	began   time.Time
	emitted int64
}

// Start starts the clock.
func (p *Pacer) Start() { p.began = time.Now() }

// Room returns how many records the subtask may emit now, at most room.
// When none is due it waits until one is (at most 50 ms, or until the
// subtask has a control message) and returns 0.
func (p *Pacer) Room(ctx *runtime.Context, room int) int {
	if p.Rate <= 0 {
		return room
	}
	perSubtask := p.Rate / float64(ctx.Parallelism())
	due := int64(time.Since(p.began).Seconds()*perSubtask) + 1 - p.emitted
	if due <= 0 {
		wait := time.Duration(float64(time.Second) / perSubtask)
		select {
		case <-time.After(min(wait, 50*time.Millisecond)):
		case <-ctx.Wakeup():
		}
		return 0
	}
	return int(min(int64(room), due))
}

// Emitted counts n records emitted.
func (p *Pacer) Emitted(n int) { p.emitted += int64(n) }

// advance is v + step, or end once that reaches or passes it, without
// overflowing anywhere in the int64 range (end - v is computed unsigned:
// it may exceed math.MaxInt64).
func advance(v, step, end int64) int64 {
	if v >= end || uint64(step) >= uint64(end)-uint64(v) {
		return end
	}
	return v + step
}
