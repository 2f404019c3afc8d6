package state

import (
	"cmp"
	"slices"
	"strings"
)

// timerQueue orders queued timers by timestamp, then key (a deterministic
// order among equal timestamps). Timers come in crowds at the same
// timestamp (every key's window ends at the same time), so the queue is a
// bucket per timestamp and a small heap of those timestamps: registering
// appends to a bucket, and a bucket is sorted by key once, when it comes
// first, then popped front to back. A binary heap over all entries cost
// two key comparisons and a cache miss per level on every pop. A bucket is
// sorted only once its timestamp is due (Next does not sort), so the
// registrations into the next bucket to fire stay appends.
//
// Entries may be stale (their timer was deleted or already fired); Timers
// skips them.
type timerQueue struct {
	buckets map[int64]*timerBucket
	times   []int64      // min-heap of the buckets' timestamps
	head    *timerBucket // the bucket of times[0], nil: look it up
	last    *timerBucket // the bucket pushed to last
	free    []*timerBucket
	n       int // entries, stale ones included
}

type timerBucket struct {
	ts     int64
	es     []queued
	sorted bool // es is in key order (from next on, for pops)
	next   int  // es[:next] were popped
}

type queued struct {
	pfx uint64 // set.pfx
	set *keyTimers
}

func compareQueued(a, b queued) int {
	if a.pfx != b.pfx {
		return cmp.Compare(a.pfx, b.pfx)
	}
	return strings.Compare(a.set.key, b.set.key)
}

func (q *timerQueue) len() int { return q.n }

// push queues set's timer at ts.
func (q *timerQueue) push(ts int64, s *keyTimers) {
	b := q.last
	if b == nil || b.ts != ts {
		if b = q.buckets[ts]; b == nil {
			b = q.newBucket(ts)
		}
		q.last = b
	}
	e := queued{pfx: s.pfx, set: s}
	if b.sorted { // being popped: keep the order of the rest
		i, _ := slices.BinarySearchFunc(b.es[b.next:], e, compareQueued)
		b.es = slices.Insert(b.es, b.next+i, e)
	} else {
		b.es = append(b.es, e)
	}
	q.n++
}

func (q *timerQueue) newBucket(ts int64) *timerBucket {
	if q.buckets == nil {
		q.buckets = map[int64]*timerBucket{}
	}
	var b *timerBucket
	if n := len(q.free); n > 0 {
		b, q.free = q.free[n-1], q.free[:n-1]
	} else {
		b = &timerBucket{}
	}
	b.ts = ts
	q.buckets[ts] = b
	q.pushTime(ts)
	q.head = nil
	return b
}

// front returns the first bucket, with an entry left at b.next (nil when
// the queue is empty). It is in key order once sorted (see take).
func (q *timerQueue) front() *timerBucket {
	for len(q.times) > 0 {
		b := q.head
		if b == nil {
			b = q.buckets[q.times[0]]
			q.head = b
		}
		if b.next == len(b.es) {
			q.release(b)
			continue
		}
		return b
	}
	return nil
}

// take sorts b, the front bucket, for popping in key order.
func (q *timerQueue) take(b *timerBucket) {
	if !b.sorted {
		slices.SortFunc(b.es[b.next:], compareQueued)
		b.sorted = true
	}
}

// popFront drops the first entry of b, the front bucket.
func (q *timerQueue) popFront(b *timerBucket) {
	b.es[b.next] = queued{}
	b.next++
	q.n--
}

func (q *timerQueue) release(b *timerBucket) {
	delete(q.buckets, b.ts)
	q.popTime()
	q.head = nil
	if q.last == b {
		q.last = nil
	}
	clear(b.es)
	b.es, b.next, b.sorted = b.es[:0], 0, false
	if len(q.free) < 2 && cap(b.es) <= 1<<18 { // at most 8 MiB kept
		q.free = append(q.free, b)
	}
}

// reset empties the queue.
func (q *timerQueue) reset() {
	for _, b := range q.buckets {
		clear(b.es)
	}
	*q = timerQueue{}
}

func (q *timerQueue) pushTime(ts int64) {
	q.times = append(q.times, ts)
	h := q.times
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *timerQueue) popTime() {
	h := q.times
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.times = h
}
