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
// timer from OnTimer finds the set of the timer that fired). The queue
// (timerQueue) holds a bucket of entries per timestamp; entries carry the
// first 8 bytes of the key, so sorting a bucket mostly reads no key.
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
	if err := b.declare(name, kindTimers, t); err != nil {
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
	t.q.push(ts, s)
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
	if t.q.len() > 64 && t.q.len() > 4*t.n {
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

// Each calls fn with every key that has timers and its timestamps,
// ascending (fn must not keep ts nor change the table).
func (t *Timers) Each(fn func(key string, ts []int64)) {
	for _, g := range t.groups {
		for k, s := range g {
			if len(s.ts) > 0 {
				fn(k, s.ts)
			}
		}
	}
}

// Len is the number of timers.
func (t *Timers) Len() int { return t.n }

// Next returns the earliest timer's timestamp (ok false when none).
func (t *Timers) Next() (ts int64, ok bool) {
	b := t.dropStale()
	if b == nil {
		return 0, false
	}
	return b.ts, true
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
	for {
		b := t.q.front()
		if b == nil || b.ts > limit {
			return nil, 0, false
		}
		t.q.take(b)
		s, ts := b.es[b.next].set, b.ts
		t.q.popFront(b)
		if i, found := slices.BinarySearch(s.ts, ts); found {
			t.removeAt(s, i)
			return s, ts, true
		}
		// a deleted timer's entry
	}
}

// dropStale drops queue entries of deleted timers until the front bucket
// holds a live one, and returns that bucket (nil when no timer is left).
func (t *Timers) dropStale() *timerBucket {
	for {
		b := t.q.front()
		if b == nil {
			return nil
		}
		// Any live entry will do (sorted or not, the bucket's timestamp is
		// the next timer's); each stale one is dropped once.
		if _, found := slices.BinarySearch(b.es[b.next].set.ts, b.ts); found {
			return b
		}
		t.q.popFront(b)
	}
}

// compact rebuilds the queue from the live timers.
func (t *Timers) compact() {
	t.q.reset()
	for _, g := range t.groups {
		for _, s := range g {
			for _, ts := range s.ts {
				t.q.push(ts, s)
			}
		}
	}
}

func (t *Timers) kind() tableKind { return kindTimers }

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
		t.q.push(ts, s)
	}
	if len(set) == 0 && !s.pending { // an empty set in an old snapshot
		s.pending = true
		t.empty = append(t.empty, s)
	}
	return nil
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
