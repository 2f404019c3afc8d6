package verify

import (
	"math/bits"
	"slices"
)

const (
	blockShift = 16 // values per block: 1<<16
	blockWords = 1 << blockShift / 64
	blockMask  = 1<<blockShift - 1
)

// bitset is a sparse set of int64: fixed blocks of 65,536 bits (8 KiB)
// allocated on first use and kept in a map by value>>16. Sequence numbers are
// dense, so tens of millions of them cost a few MB; a stray huge value costs
// one more block, not a bitmap up to it. Values usually arrive in runs, so the
// block of the previous add is cached.
type bitset struct {
	blocks map[int64]*block
	last   *block
	lastID int64
}

type block [blockWords]uint64

func newBitset() *bitset {
	return &bitset{blocks: make(map[int64]*block)}
}

// add inserts v and reports whether it was present already.
func (s *bitset) add(v int64) (dup bool) {
	id := v >> blockShift
	b := s.last
	if b == nil || id != s.lastID {
		b = s.blocks[id]
		if b == nil {
			b = new(block)
			s.blocks[id] = b
		}
		s.last, s.lastID = b, id
	}
	i := v & blockMask
	w, m := &b[i>>6], uint64(1)<<(i&63)
	dup = *w&m != 0
	*w |= m
	return dup
}

// runs calls fn for each maximal run of consecutive present values, in
// increasing order.
func (s *bitset) runs(fn func(Range)) {
	ids := make([]int64, 0, len(s.blocks))
	for id := range s.blocks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var cur Range
	open := false
	emit := func(from, to int64) {
		switch {
		case open && from == cur.To+1:
			cur.To = to
		case open:
			fn(cur)
			cur = Range{from, to}
		default:
			cur, open = Range{from, to}, true
		}
	}
	for _, id := range ids {
		s.blocks[id].runs(id<<blockShift, emit)
	}
	if open {
		fn(cur)
	}
}

// runs calls emit for each run of set bits in the block, base being the
// value of bit 0. Adjacent runs across words are emitted separately; the
// caller merges them.
func (b *block) runs(base int64, emit func(from, to int64)) {
	for wi, w := range b {
		for off := 0; w != 0; {
			start := bits.TrailingZeros64(w)
			w >>= uint(start)
			n := bits.TrailingZeros64(^w) // length of the run of ones
			from := base + int64(wi*64+off+start)
			emit(from, from+int64(n)-1)
			off += start + n
			if n == 64 {
				break
			}
			w >>= uint(n)
		}
	}
}
