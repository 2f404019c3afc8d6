package state

import (
	"container/heap"
	"slices"
)

// Timers is a keyed table of timers: per key, a set of timestamps, in key
// groups like every keyed state (so timers are in every snapshot and move
// with their keys on rescale), plus a priority queue over the backend's
// keys that yields them in timestamp order. One timer per key and
// timestamp: registering it again does nothing. Used from the subtask's
// goroutine only.
type Timers struct {
	b      *KeyedBackend
	groups []map[string]map[int64]struct{}
	q      timerQueue
	n      int // live timers
}

// NewTimers declares (or returns the restored) timer table name.
func NewTimers(b *KeyedBackend, name string) (*Timers, error) {
	t := &Timers{b: b, groups: make([]map[string]map[int64]struct{}, b.rng.Len())}
	for i := range t.groups {
		t.groups[i] = map[string]map[int64]struct{}{}
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
	if set == nil {
		set = map[int64]struct{}{}
		g[string(t.b.curKey)] = set
	}
	if _, dup := set[ts]; dup {
		return
	}
	set[ts] = struct{}{}
	t.n++
	heap.Push(&t.q, timerEntry{ts: ts, kg: t.b.curKG, key: string(t.b.curKey)})
}

// Delete removes the current key's timer at ts, if any.
func (t *Timers) Delete(ts int64) {
	g := t.groups[t.b.curKG]
	set := g[string(t.b.curKey)]
	if _, ok := set[ts]; !ok {
		return
	}
	delete(set, ts)
	if len(set) == 0 {
		delete(g, string(t.b.curKey))
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
	e := heap.Pop(&t.q).(timerEntry)
	g := t.groups[e.kg]
	set := g[e.key]
	delete(set, e.ts)
	if len(set) == 0 {
		delete(g, e.key)
	}
	t.n--
	return e.key, e.ts, true
}

// dropStale pops queue entries of deleted timers.
func (t *Timers) dropStale() {
	for len(t.q) > 0 {
		e := t.q[0]
		if _, live := t.groups[e.kg][e.key][e.ts]; live {
			return
		}
		heap.Pop(&t.q)
	}
}

// compact rebuilds the queue from the live timers.
func (t *Timers) compact() {
	q := make(timerQueue, 0, t.n)
	for kg, g := range t.groups {
		for key, set := range g {
			for ts := range set {
				q = append(q, timerEntry{ts: ts, kg: kg, key: key})
			}
		}
	}
	heap.Init(&q)
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
	var ts []int64
	for k, set := range t.groups[g] {
		e.str(k)
		ts = ts[:0]
		for v := range set {
			ts = append(ts, v)
		}
		slices.Sort(ts)
		e.lenPrefixed(func(dst []byte) []byte {
			inner := encoder{buf: dst}
			inner.uvarint(uint64(len(ts)))
			for _, v := range ts {
				inner.varint(v)
			}
			return inner.buf
		})
	}
}

func (t *Timers) decodeEntry(g int, key, value []byte) error {
	d := decoder{buf: value}
	n := d.uvarint()
	set := make(map[int64]struct{}, min(n, uint64(len(value))))
	for i := uint64(0); i < n && d.err == nil; i++ {
		set[d.varint()] = struct{}{}
	}
	if d.err != nil {
		return d.err
	}
	if len(d.buf) != 0 {
		return errTruncated
	}
	k := string(key)
	if old := t.groups[g][k]; old != nil { // parts of one key group from two old snapshots
		for ts := range old {
			set[ts] = struct{}{}
		}
		t.n -= len(old)
	}
	t.groups[g][k] = set
	t.n += len(set)
	for ts := range set {
		heap.Push(&t.q, timerEntry{ts: ts, kg: g, key: k})
	}
	return nil
}

type timerEntry struct {
	ts  int64
	kg  int // index into the backend's groups
	key string
}

type timerQueue []timerEntry

func (q timerQueue) Len() int { return len(q) }
func (q timerQueue) Less(i, j int) bool {
	if q[i].ts != q[j].ts {
		return q[i].ts < q[j].ts
	}
	return q[i].key < q[j].key // deterministic order among equal timestamps
}
func (q timerQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *timerQueue) Push(x any)   { *q = append(*q, x.(timerEntry)) }
func (q *timerQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
