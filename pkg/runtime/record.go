package runtime

import (
	"strings"
	"unsafe"
)

// Record is one element of a stream. Value holds the payload bytes as the
// source produced them (for JSON formats, the JSON text); Key is set by keyBy
// and decides the key group. Slices may point into memory shared with other
// records of the same batch: an operator that keeps a record beyond the call
// that handed it over must copy Key and Value.
type Record struct {
	Key       []byte
	Value     []byte
	Timestamp int64 // event time in Unix milliseconds; 0 when unknown
	// Split is set by sources that read several splits (SplitSource): the
	// index of the split the record came from, for per-split watermarks.
	Split uint32
}

// Batch is the unit that moves between subtasks. Records are appended by the
// producer and read by the consumer; once sent, the producer must not touch
// it again.
type Batch struct {
	Records []Record
	// Input is the index of the operator input the batch came from: its
	// place among the operator's inputs (from, or the input options of a
	// type such as a join's left and right, see Definition.InputOptions).
	// Always 0 for an operator with one input. Set by the engine.
	Input int
}

// DefaultBatchSize is how many records a batch holds before it is sent.
// Large enough to amortise a channel hand-over to well under a nanosecond
// per record, small enough to keep latency and memory low.
const DefaultBatchSize = 512

// NewBatch returns an empty batch of DefaultBatchSize records' capacity
// (for tests of sources and operators; the engine pools its own).
func NewBatch() *Batch { return &Batch{Records: make([]Record, 0, DefaultBatchSize)} }

// Len is the number of records.
func (b *Batch) Len() int { return len(b.Records) }

// Reset empties the batch, keeping its capacity.
func (b *Batch) Reset() {
	clear(b.Records) // drop references so payloads can be collected
	b.Records = b.Records[:0]
}

// Arena hands out byte slices for record payloads from large blocks, so a
// source formatting many small values allocates once per block instead of
// once per record. Slices handed out are not reused (records may outlive
// the batch they were created for) unless the arena's owner calls Rewind.
type Arena struct {
	buf []byte
	// After the first Rewind (reuse): blocks are the arena's blocks in the
	// order it fills them, and buf is blocks[next] (or a block of its own
	// for a value bigger than a block).
	blocks [][]byte
	next   int
	reuse  bool
}

const arenaBlock = 32 << 10

// Alloc returns a slice with length 0 and capacity n carved from the arena.
// Its bytes are not zeroed: what is not appended is undefined.
func (a *Arena) Alloc(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.grow(n)
	}
	start := len(a.buf)
	a.buf = a.buf[:start+n]
	return a.buf[start : start : start+n]
}

// Copy returns a copy of p that lives in the arena (nil when p is empty:
// the Kafka sink relies on it to write an empty value as a null one).
func (a *Arena) Copy(p []byte) []byte {
	return append(a.Alloc(len(p)), p...)
}

// Append formats into the arena: fn appends to the slice it is given and
// returns it; the result is carved out of the arena (it must not grow past
// max bytes).
func (a *Arena) Append(max int, fn func([]byte) []byte) []byte {
	if max <= 0 {
		return fn(nil)
	}
	dst := a.Alloc(max)
	return a.Keep(dst, fn(dst))
}

// Keep ends a formatting into dst, the latest Alloc: out is what was
// appended to dst. The part of dst out did not use goes back to the arena;
// an out that outgrew dst (append reallocated it) is returned as it is,
// and all of dst goes back.
func (a *Arena) Keep(dst, out []byte) []byte {
	max := cap(dst)
	if len(out) > max || (len(out) > 0 && &out[0] != &dst[:1][0]) {
		a.buf = a.buf[:len(a.buf)-max]
		return out
	}
	a.buf = a.buf[:len(a.buf)-max+len(out)]
	return out[:len(out):len(out)]
}

// grow starts the block the next n bytes come from: the next one kept,
// when the arena reuses its blocks and it has room, else a new one.
func (a *Arena) grow(n int) {
	if a.reuse && n <= arenaBlock {
		if a.next+1 < len(a.blocks) {
			a.next++
			a.buf = a.blocks[a.next][:0]
			return
		}
		a.buf = makeNoZero(arenaBlock)
		a.blocks = append(a.blocks, a.buf)
		a.next = len(a.blocks) - 1
		return
	}
	a.buf = makeNoZero(max(n, arenaBlock)) // a big value: never reused
}

// Rewind declares every slice the arena has handed out dead: the next
// ones reuse their bytes, block by block, in the order they were filled.
// From the first Rewind on the arena keeps the blocks it fills (as many as
// were filled between two Rewinds at most); a value bigger than a block
// gets one of its own, which is not kept. Only a caller that knows nothing
// reads those slices any more may call it (see ValueRecycler).
func (a *Arena) Rewind() {
	if !a.reuse {
		a.reuse = true
		if cap(a.buf) == arenaBlock {
			a.blocks = append(a.blocks, a.buf[:0])
		}
	}
	if len(a.blocks) == 0 {
		a.buf = nil
		return
	}
	a.next = 0
	a.buf = a.blocks[0][:0]
}

// makeNoZero returns a slice of length 0 and capacity n whose bytes are not
// zeroed first: an arena's bytes are appended to before they are read, so
// clearing a block is wasted work. Clearing was 6% of Nexmark q1's CPU; in
// process q1's median went from 646 to 599 cpu-ns/event over 11 alternating
// runs (the writes that follow now take the cache misses the clearing took).
// Go's only way to such memory is strings.Builder's growth, which calls the
// runtime's bytealg.MakeNoZero. The Builder and its string are dropped: the
// returned slice is the block's only reference, which keeps it alive.
// unsafe.StringData's bytes must not be modified in general because the
// string would change; here no string of them is kept, compared or hashed,
// and the memory is the Builder's []byte buffer (heap, noscan), which the
// Builder itself writes the same way.
func makeNoZero(n int) []byte {
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0) // so that String's data is the block's start
	return unsafe.Slice(unsafe.StringData(b.String()), n)[:0:n]
}
