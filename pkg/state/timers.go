package state

import "slices"

// Timers is a keyed table of timers: per key, a set of timestamps, in key
// groups like every keyed state (so timers are in every snapshot and move
// with their keys on rescale), plus a priority queue over the backend's
// keys that yields them in timestamp order. One timer per key and
// timestamp: registering it again does nothing. Used from the subtask's
// goroutine only.
//
// A key's set is a small sorted slice held by one object per key
// (keyTimers); queue entries point at it, so popping a timer checks and
// removes it without hashing the key, and the current key's set is looked
// up once per SetCurrentKey (an operator registering the next window's
// timer from OnTimer finds the set of the timer that fired). The queue is a
// heap of plain entries (container/heap boxed each one) that carry the
// first 8 bytes of the key, so equal timestamps mostly order without
// reading the key.
type Timers struct {
	b      *KeyedBackend
	groups []map[string]*keyTimers
	q      timerQueue
	n      int // live timers
	// The current key's set, valid while the backend's keyGen is cacheGen.
	cacheGen uint64
	cache    *keyTimers
	// Sets emptied but still in their group's map: a key whose last timer
	// fired or was deleted mostly registers another at once (the next
	// window, the session's new end), so the set is dropped later (purge),
	// and only if it is still empty.
	empty []*keyTimers
}

// keyTimers is one key's timers.
type keyTimers struct {
	key     string
	kb      []byte // key as bytes, made on the first firing
	pfx     uint64 // keyPrefix(key)
	kg      int    // index into the backend's groups
	pending bool   // on Timers.empty
	ts      []int64
	inline  [2]int64 // ts for up to 2 timers: no second allocation
}

// purgeAt is how many emptied sets wait before they are dropped.
const purgeAt = 1024

// NewTimers declares (or returns the restored) timer table name.
func NewTimers(b *KeyedBackend, name string) (*Timers, error) {
	t := &Timers{b: b, groups: make([]map[string]*keyTimers, b.rng.Len())}
	for i := range t.groups {
		t.groups[i] = map[string]*keyTimers{}
	}
	if err := b.declare(name, KindTimers, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Timers) newSet(kg int, key string) *keyTimers {
	s := &keyTimers{key: key, pfx: keyPrefix(key), kg: kg}
	s.ts = s.inline[:0]
	t.groups[kg][key] = s
	return s
}

// current returns the current key's set (nil when it has none).
func (t *Timers) current() *keyTimers {
	if t.cacheGen == t.b.keyGen && t.cacheGen != 0 {
		return t.cache
	}
	s := t.groups[t.b.curKG][string(t.b.curKey)]
	t.cacheGen, t.cache = t.b.keyGen, s
	return s
}

// Register adds a timer at ts for the current key.
func (t *Timers) Register(ts int64) {
	s := t.current()
	if s == nil {
		s = t.newSet(t.b.curKG, string(t.b.curKey))
		t.cache = s
	}
	i, found := slices.BinarySearch(s.ts, ts)
	if found {
		return
	}
	s.ts = slices.Insert(s.ts, i, ts)
	t.n++
	t.q.push(timerEntry{ts: ts, pfx: s.pfx, set: s})
}

// Delete removes the current key's timer at ts, if any.
func (t *Timers) Delete(ts int64) {
	s := t.current()
	if s == nil {
		return
	}
	i, found := slices.BinarySearch(s.ts, ts)
	if !found {
		return
	}
	t.removeAt(s, i)
	// The queue entry stays and is skipped when it comes up; compact when
	// stale entries dominate.
	if len(t.q) > 64 && len(t.q) > 4*t.n {
		t.compact()
	}
}

// removeAt drops the set's i-th timer.
func (t *Timers) removeAt(s *keyTimers, i int) {
	s.ts = slices.Delete(s.ts, i, i+1)
	t.n--
	if len(s.ts) == 0 && !s.pending {
		s.pending = true
		t.empty = append(t.empty, s)
		if len(t.empty) >= purgeAt {
			t.purge()
		}
	}
}

// purge drops the emptied sets that stayed empty from their maps.
func (t *Timers) purge() {
	for i, s := range t.empty {
		s.pending = false
		if len(s.ts) == 0 {
			if g := t.groups[s.kg]; g[s.key] == s {
				delete(g, s.key)
			}
			if t.cache == s {
				t.cacheGen, t.cache = 0, nil
			}
		}
		t.empty[i] = nil
	}
	t.empty = t.empty[:0]
}

// Len is the number of timers.
func (t *Timers) Len() int { return t.n }

// Next returns the earliest timer's timestamp (ok false when none).
func (t *Timers) Next() (ts int64, ok bool) {
	t.dropStale()
	if len(t.q) == 0 {
		return 0, false
	}
	return t.q[0].ts, true
}

// Pop removes and returns the earliest timer if its timestamp is at most
// limit (ok false otherwise). key is the timer's key, to make current.
func (t *Timers) Pop(limit int64) (key string, ts int64, ok bool) {
	s, ts, ok := t.pop(limit)
	if !ok {
		return "", 0, false
	}
	return s.key, ts, true
}

// PopCurrent is Pop that makes the timer's key the backend's current key
// (as SetCurrentKey would, without hashing it again).
func (t *Timers) PopCurrent(limit int64) (ts int64, ok bool) {
	s, ts, ok := t.pop(limit)
	if !ok {
		return 0, false
	}
	if s.kb == nil && s.key != "" {
		s.kb = []byte(s.key)
	}
	t.b.setCurrent(s.kb, s.kg)
	t.cacheGen, t.cache = t.b.keyGen, s
	return ts, true
}

func (t *Timers) pop(limit int64) (*keyTimers, int64, bool) {
	for len(t.q) > 0 {
		e := &t.q[0]
		if e.ts > limit {
			return nil, 0, false
		}
		s, ts := e.set, e.ts
		t.q.pop()
		if i, found := slices.BinarySearch(s.ts, ts); found {
			t.removeAt(s, i)
			return s, ts, true
		}
		// a deleted timer's entry
	}
	return nil, 0, false
}

// live reports whether e is a registered timer.
func (e timerEntry) live() bool {
	_, found := slices.BinarySearch(e.set.ts, e.ts)
	return found
}

// dropStale pops queue entries of deleted timers.
func (t *Timers) dropStale() {
	for len(t.q) > 0 && !t.q[0].live() {
		t.q.pop()
	}
}

// compact rebuilds the queue from the live timers.
func (t *Timers) compact() {
	q := make(timerQueue, 0, t.n)
	for _, g := range t.groups {
		for _, s := range g {
			for _, ts := range s.ts {
				q = append(q, timerEntry{ts: ts, pfx: s.pfx, set: s})
			}
		}
	}
	q.init()
	t.q = q
}

func (t *Timers) kind() Kind { return KindTimers }

func (t *Timers) numKeys() int {
	t.purge()
	n := 0
	for _, g := range t.groups {
		n += len(g)
	}
	return n
}

func (t *Timers) groupLen(g int) int {
	t.purge()
	return len(t.groups[g])
}

// Timer entries are encoded as key → (count, then each timestamp as a
// varint, ascending).
func (t *Timers) encodeGroup(g int, e *encoder) {
	t.purge() // no empty set: groupLen counted what is written
	for k, s := range t.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(len(s.ts)))
			for _, v := range s.ts {
				inner.varint(v)
			}
			return inner.buf
		})
	}
}

func (t *Timers) decodeEntry(g int, key, value []byte) error {
	d := decoder{buf: value}
	n := d.uvarint()
	set := make([]int64, 0, min(n, uint64(len(value))))
	for i := uint64(0); i < n && d.err == nil; i++ {
		set = append(set, d.varint())
	}
	if d.err != nil {
		return d.err
	}
	if len(d.buf) != 0 {
		return errTruncated
	}
	t.cacheGen, t.cache = 0, nil
	k := string(key)
	s := t.groups[g][k]
	if s != nil { // parts of one key group from two old snapshots
		set = append(set, s.ts...)
		t.n -= len(s.ts)
	} else {
		s = t.newSet(g, k)
	}
	slices.Sort(set)
	set = slices.Compact(set)
	s.ts = set
	t.n += len(set)
	for _, ts := range set {
		t.q.push(timerEntry{ts: ts, pfx: s.pfx, set: s})
	}
	if len(set) == 0 && !s.pending { // an empty set in an old snapshot
		s.pending = true
		t.empty = append(t.empty, s)
	}
	return nil
}

// timerEntry is one queued timer. An entry whose set no longer holds ts is
// stale (the timer was deleted, or fired from an earlier entry).
type timerEntry struct {
	ts  int64
	pfx uint64 // set.pfx
	set *keyTimers
}

// keyPrefix is the first 8 bytes of key, big-endian, zero-padded: prefixes
// order as the keys do, except that equal prefixes need the whole keys.
func keyPrefix(key string) uint64 {
	var p uint64
	for i := 0; i < 8; i++ {
		p <<= 8
		if i < len(key) {
			p |= uint64(key[i])
		}
	}
	return p
}

// timerQueue is a binary min-heap of entries by timestamp, then key (a
// deterministic order among equal timestamps).
type timerQueue []timerEntry

func (q timerQueue) less(i, j int) bool {
	a, b := &q[i], &q[j]
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.pfx != b.pfx {
		return a.pfx < b.pfx
	}
	return a.set.key < b.set.key
}

func (q *timerQueue) push(e timerEntry) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *timerQueue) pop() timerEntry {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = timerEntry{}
	h = h[:last]
	h.down(0)
	*q = h
	return top
}

func (q timerQueue) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(q) {
			return
		}
		m := l
		if r := l + 1; r < len(q) && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
}

func (q timerQueue) init() {
	for i := len(q)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}
