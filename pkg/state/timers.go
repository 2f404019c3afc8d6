package state

import "slices"

// Timers is a keyed table of timers: per key, a set of timestamps, in key
// groups like every keyed state (so timers are in every snapshot and move
// with their keys on rescale), plus a priority queue over the backend's
// keys that yields them in timestamp order. One timer per key and
// timestamp: registering it again does nothing. Used from the subtask's
// goroutine only.
//
// A key's set is a small sorted slice (keys mostly have one or two timers:
// a map per key cost more memory than the rest of a join's row), and the
// queue a heap of plain entries (container/heap boxed each one).
type Timers struct {
	b      *KeyedBackend
	groups []map[string][]int64 // key → its timestamps, ascending
	q      timerQueue
	n      int // live timers
}

// NewTimers declares (or returns the restored) timer table name.
func NewTimers(b *KeyedBackend, name string) (*Timers, error) {
	t := &Timers{b: b, groups: make([]map[string][]int64, b.rng.Len())}
	for i := range t.groups {
		t.groups[i] = map[string][]int64{}
	}
	if err := b.declare(name, KindTimers, t); err != nil {
		return nil, err
	}
	return t, nil
}

// Register adds a timer at ts for the current key.
func (t *Timers) Register(ts int64) {
	g := t.groups[t.b.curKG]
	set := g[string(t.b.curKey)]
	i, found := slices.BinarySearch(set, ts)
	if found {
		return
	}
	key := string(t.b.curKey) // one string for the set and the queue entry
	g[key] = slices.Insert(set, i, ts)
	t.n++
	t.q.push(timerEntry{ts: ts, kg: t.b.curKG, key: key})
}

// Delete removes the current key's timer at ts, if any.
func (t *Timers) Delete(ts int64) {
	g := t.groups[t.b.curKG]
	set := g[string(t.b.curKey)]
	i, found := slices.BinarySearch(set, ts)
	if !found {
		return
	}
	if len(set) == 1 {
		delete(g, string(t.b.curKey))
	} else {
		g[string(t.b.curKey)] = slices.Delete(set, i, i+1)
	}
	t.n--
	// The queue entry stays and is skipped when it comes up; compact when
	// stale entries dominate.
	if len(t.q) > 64 && len(t.q) > 4*t.n {
		t.compact()
	}
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
	t.dropStale()
	if len(t.q) == 0 || t.q[0].ts > limit {
		return "", 0, false
	}
	e := t.q.pop()
	t.remove(e)
	t.n--
	return e.key, e.ts, true
}

// live reports whether e is a registered timer.
func (t *Timers) live(e timerEntry) bool {
	_, found := slices.BinarySearch(t.groups[e.kg][e.key], e.ts)
	return found
}

// remove drops e (live) from its key's set.
func (t *Timers) remove(e timerEntry) {
	g := t.groups[e.kg]
	set := g[e.key]
	i, _ := slices.BinarySearch(set, e.ts)
	if len(set) == 1 {
		delete(g, e.key)
	} else {
		g[e.key] = slices.Delete(set, i, i+1)
	}
}

// dropStale pops queue entries of deleted timers.
func (t *Timers) dropStale() {
	for len(t.q) > 0 && !t.live(t.q[0]) {
		t.q.pop()
	}
}

// compact rebuilds the queue from the live timers.
func (t *Timers) compact() {
	q := make(timerQueue, 0, t.n)
	for kg, g := range t.groups {
		for key, set := range g {
			for _, ts := range set {
				q = append(q, timerEntry{ts: ts, kg: kg, key: key})
			}
		}
	}
	q.init()
	t.q = q
}

func (t *Timers) kind() Kind { return KindTimers }

func (t *Timers) numKeys() int {
	n := 0
	for _, g := range t.groups {
		n += len(g)
	}
	return n
}

func (t *Timers) groupLen(g int) int { return len(t.groups[g]) }

// Timer entries are encoded as key → (count, then each timestamp as a
// varint, ascending).
func (t *Timers) encodeGroup(g int, e *encoder) {
	for k, set := range t.groups[g] {
		e.str(k)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(len(set)))
			for _, v := range set {
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
	k := string(key)
	if old := t.groups[g][k]; old != nil { // parts of one key group from two old snapshots
		set = append(set, old...)
		t.n -= len(old)
	}
	slices.Sort(set)
	set = slices.Compact(set)
	t.groups[g][k] = set
	t.n += len(set)
	for _, ts := range set {
		t.q.push(timerEntry{ts: ts, kg: g, key: k})
	}
	return nil
}

type timerEntry struct {
	ts  int64
	kg  int // index into the backend's groups
	key string
}

// timerQueue is a binary min-heap of entries by timestamp, then key (a
// deterministic order among equal timestamps).
type timerQueue []timerEntry

func (q timerQueue) less(i, j int) bool {
	if q[i].ts != q[j].ts {
		return q[i].ts < q[j].ts
	}
	return q[i].key < q[j].key
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
