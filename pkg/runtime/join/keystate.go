package join

import (
	"math"
	"sort"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// row is one record kept in join state: the slot it belongs to (its pane
// or session start in a window join, its timestamp in an interval join),
// its event time, where its value is in its side's buffer (keyState.vals:
// chunk, offset and length), whether it matched (interval join, left
// outer) and, for an interval join's left row, the until expression's
// value (see untilNone, untilUnset and intervalJoin). It holds no pointer: a key's rows are one allocation per side
// that the collector does not scan, and growing it copies no pointers.
type row struct {
	slot, ts   int64
	until      int64
	chunk, off int32
	n          int32
	matched    bool
}

// The until of a row whose until expression gave null (untilNone), and of
// one no until expression was evaluated for (untilUnset: a window join's,
// an interval join's without until, or restored from format 2 or 1).
const (
	untilNone  = math.MaxInt64
	untilUnset = math.MaxInt64 - 1
)

// session is one session window of a key: [start, end).
type session struct{ start, end int64 }

// keyState is everything a join keeps for one key, in one keyed value
// (one lookup per record; a map per key would cost more than the rows):
// each side's rows sorted by slot (in arrival order within a slot), the
// key's sessions sorted by start (session windows), and the event-time
// timers scheduled for the key: a window join's one, at its next window
// end, in timers[0]; an interval join's per side, at the side's next
// expiry, the earliest of its rows' (see intervalJoin).
type keyState struct {
	sides [2][]row
	// vals[s] holds the values of side s's rows, in arrival order, in
	// chunks (a key of many rows grows by a chunk, not by copying all its
	// values); dead[s] counts the bytes no row refers to any more and
	// used[s] all bytes (see drop).
	vals       [2][][]byte
	dead, used [2]int
	sessions   []session
	timers     [2]int64 // runtime.MinWatermark: none
	// unset: a restored left row's until is untilUnset (the interval
	// join evaluates it when it first meets the key; not encoded).
	unset bool
}

func newKeyState() *keyState {
	return &keyState{timers: [2]int64{runtime.MinWatermark, runtime.MinWatermark}}
}

func (k *keyState) empty() bool { return len(k.sides[left]) == 0 && len(k.sides[right]) == 0 }

// value is the value of row r of side s. It is valid until the side's
// rows change: a side that empties reuses its last chunk for the next
// ones (drop), so a caller copies what it keeps (the emitter does).
func (k *keyState) value(s int, r *row) []byte {
	c := k.vals[s][r.chunk]
	return c[r.off : r.off+r.n : r.off+r.n]
}

// Chunks of a side's buffer start at chunkMin bytes and double up to
// chunkMax (a bigger value gets a chunk of its size).
const (
	chunkMin = 256
	chunkMax = 64 << 10
)

// A side that empties keeps its rows' slice and its last chunk for its
// next rows when they are at most this big (see base.cut, drop).
const (
	keepRows  = 256
	keepChunk = 4 << 10
)

// keep appends value v to side s's buffer and returns where it is.
func (k *keyState) keep(s int, v []byte) (chunk, off int32) {
	cs := k.vals[s]
	if n := len(cs); n == 0 || cap(cs[n-1])-len(cs[n-1]) < len(v) {
		size := chunkMin
		if n > 0 {
			size = min(chunkMax, 2*cap(cs[n-1]))
		}
		cs = append(cs, make([]byte, 0, max(size, len(v))))
		k.vals[s] = cs
	}
	last := len(cs) - 1
	off = int32(len(cs[last]))
	cs[last] = append(cs[last], v...)
	k.used[s] += len(v)
	return int32(last), off
}

// compactAt is the size of dead bytes past which a side's buffer is
// rebuilt from its live rows (when they are also less than the dead ones):
// rows leave a key's buffer in slot order, not in the order they came.
const compactAt = 16 << 10

// drop forgets the values of side s's rows rs, which left it: the buffer
// empties with the side's last row and is rebuilt once mostly dead.
func (k *keyState) drop(s int, rs []row) {
	if len(k.sides[s]) == 0 {
		// The last chunk, if small, stays for the side's next rows: a key
		// whose one side comes and goes (q4's bids, its auction staying)
		// would otherwise allocate a chunk every time.
		cs := k.vals[s]
		if n := len(cs); n > 0 && cap(cs[n-1]) <= keepChunk {
			last := cs[n-1][:0]
			clear(cs) // the other chunks go
			k.vals[s] = append(cs[:0], last)
		} else {
			k.vals[s] = nil
		}
		k.dead[s], k.used[s] = 0, 0
		return
	}
	for _, r := range rs {
		k.dead[s] += int(r.n)
	}
	if live := k.used[s] - k.dead[s]; k.dead[s] > compactAt && k.dead[s] > live {
		old := k.vals[s]
		k.vals[s], k.dead[s], k.used[s] = nil, 0, 0
		for i := range k.sides[s] {
			r := &k.sides[s][i]
			c := old[r.chunk]
			r.chunk, r.off = k.keep(s, c[r.off:r.off+r.n])
		}
	}
}

// insert adds r, with value v, to side s, after the rows of slots up to
// r.slot.
func (k *keyState) insert(s int, r row, v []byte) int {
	r.chunk, r.off = k.keep(s, v)
	r.n = int32(len(v))
	rs := k.sides[s]
	i := len(rs)
	if i > 0 && rs[i-1].slot > r.slot { // out of order: find its place
		i = sort.Search(len(rs), func(j int) bool { return rs[j].slot > r.slot })
	}
	rs = append(rs, row{})
	copy(rs[i+1:], rs[i:])
	rs[i] = r
	k.sides[s] = rs
	return i
}

// between returns the index range of side s's rows with from <= slot <= to.
func (k *keyState) between(s int, from, to int64) (int, int) {
	rs := k.sides[s]
	lo := sort.Search(len(rs), func(j int) bool { return rs[j].slot >= from })
	hi := lo + sort.Search(len(rs)-lo, func(j int) bool { return rs[lo+j].slot > to })
	return lo, hi
}

// sideStats counts one side's rows and value bytes in state, for metrics
// and savepoint inspect.
type sideStats struct {
	rows, bytes int64
}

func (s *sideStats) add(r row)    { s.rows++; s.bytes += int64(r.n) }
func (s *sideStats) remove(r row) { s.rows--; s.bytes -= int64(r.n) }

// stateCodec encodes a keyState: version 3, the two timers, then per side a
// count and its rows (slot, timestamp, value, matched, and its until: 0
// unset, 1 none, or 2 and the time), then the sessions. Version 2 had no
// until (its rows read as unset). Version 1 (before 2026-12) had one
// timer, the key's earliest: it reads as timers[0] (an interval join whose timer that was finds at its firing
// that the timers of both sides are to be set; see intervalJoin.OnTimer).
// Decoding happens only when restored state is declared, so the codec
// counts what it decodes into stats: a restored operator knows its state's
// size without walking every key.
type stateCodec struct{ stats *[2]sideStats }

const stateVersion = 3

func (c stateCodec) Append(dst []byte, k *keyState) []byte {
	e := state.NewEncoder(stateVersion)
	e.Varint(k.timers[0])
	e.Varint(k.timers[1])
	for s := range k.sides {
		e.Uvarint(uint64(len(k.sides[s])))
		for i := range k.sides[s] {
			r := &k.sides[s][i]
			e.Varint(r.slot)
			e.Varint(r.ts)
			e.Bytes(k.value(s, r))
			e.Bool(r.matched)
			switch r.until {
			case untilUnset:
				e.Uvarint(0)
			case untilNone:
				e.Uvarint(1)
			default:
				e.Uvarint(2)
				e.Varint(r.until)
			}
		}
	}
	e.Uvarint(uint64(len(k.sessions)))
	for _, w := range k.sessions {
		e.Varint(w.start)
		e.Varint(w.end)
	}
	return append(dst, e.Encoded()...)
}

func (c stateCodec) Decode(b []byte) (*keyState, error) {
	d := state.NewDecoder("join key state", b, stateVersion)
	k := newKeyState()
	k.timers[0] = d.Varint()
	if d.Version() >= 2 {
		k.timers[1] = d.Varint()
	}
	for s := range k.sides {
		n := d.Uvarint()
		rs := make([]row, 0, min(n, uint64(len(b))))
		for i := uint64(0); i < n && d.Err() == nil; i++ {
			r := row{slot: d.Varint(), ts: d.Varint(), until: untilUnset}
			v := d.Bytes() // copied into the key's own buffer: the state file's goes
			r.chunk, r.off = k.keep(s, v)
			r.n = int32(len(v))
			r.matched = d.Bool()
			if d.Version() >= 3 {
				switch tag := d.Uvarint(); tag {
				case 0:
				case 1:
					r.until = untilNone
				case 2:
					r.until = d.Varint()
				default:
					d.Fail("row until tag %d", tag)
				}
			}
			if s == left && r.until == untilUnset {
				k.unset = true
			}
			rs = append(rs, r)
		}
		k.sides[s] = rs
	}
	n := d.Uvarint()
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		k.sessions = append(k.sessions, session{start: d.Varint(), end: d.Varint()})
	}
	if err := d.Finish(); err != nil {
		return nil, err
	}
	if c.stats != nil {
		for s := range k.sides {
			for _, r := range k.sides[s] {
				c.stats[s].add(r)
			}
		}
	}
	return k, nil
}

// runtimeValue is the keyed value handle the joins keep their keyState in.
type runtimeValue = *state.Value[*keyState]
