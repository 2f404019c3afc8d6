package engine

import (
	"sync"
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Partitioning decides which downstream subtask receives a record.
type Partitioning uint8

const (
	// Forward: subtask i sends to subtask i (same parallelism).
	Forward Partitioning = iota + 1
	// Hash: by key group of Record.Key (after keyBy).
	Hash
	// Rebalance: round-robin, batch by batch.
	Rebalance
)

func (p Partitioning) String() string {
	switch p {
	case Forward:
		return "forward"
	case Hash:
		return "hash"
	case Rebalance:
		return "rebalance"
	}
	return "unknown"
}

// target is one downstream input channel.
type target struct {
	gate    *Gate
	channel int
	local   *subtask // a chained reader: events are handed to it, not pushed (chain.go)
}

var batchPool = sync.Pool{New: func() any {
	return &runtime.Batch{Records: make([]runtime.Record, 0, runtime.DefaultBatchSize)}
}}

// newBatch returns an empty batch from the pool.
func newBatch() *runtime.Batch { return batchPool.Get().(*runtime.Batch) }

// releaseBatch returns a consumed batch to the pool. Payload bytes are not
// reused (records downstream may still point at them); only the record
// slice is.
func releaseBatch(b *runtime.Batch) {
	if cap(b.Records) != runtime.DefaultBatchSize {
		return
	}
	b.Reset()
	batchPool.Put(b)
}

// releaseHandedBack is releaseBatch for a batch of a recycling source's
// hand-back path (handback.go), without clearing its records: their
// Values point into the source's memory, which it keeps to reuse, and
// clearing 512 records is 32 KiB written on the reader's core that the
// source's core must fetch back to fill the batch again (10–15% of the
// source's busy time on file → discard). The stale records are
// overwritten when the batch is filled again, or go with the pool's.
func releaseHandedBack(b *runtime.Batch) {
	if cap(b.Records) != runtime.DefaultBatchSize {
		return
	}
	b.Records = b.Records[:0]
	batchPool.Put(b)
}

// edge buffers records for the subtasks of one downstream operator.
type edge struct {
	part    Partitioning
	tag     string // the side output it carries; "" for the main output
	targets []target
	bufs    []*runtime.Batch
	rr      int
	maxPar  int
	input   int                 // the reader's input it feeds (Batch.Input)
	key     runtime.KeySelector // nil: records keep their key
	// keyed is the record being keyed: the selector takes a pointer, and
	// one to a local would move every record to the heap.
	keyed runtime.Record
	// copy: the edge leaves the chain of a source that writes each batch
	// over the last (planValueReuse), so a record's Key and Value are
	// copied into arena before they are buffered.
	copy bool
	// noValues: the reader reads no Values (Vertex.valuesUnread), so
	// records go without them, and need no copy of them.
	noValues bool
	rewrite  bool // copy || noValues: what is buffered is rewritten
	arena    runtime.Arena
}

// rewritten is r as e buffers it: without its Value for a reader that
// reads none, and with its Key and Value in e's own memory when they are
// the recycling source's (nil stays nil: no value is not an empty one,
// docs/values.md).
func (e *edge) rewritten(r runtime.Record) runtime.Record {
	if e.noValues {
		r.Value = nil
	}
	if e.copy {
		r.Value, r.Key = e.copyOf(r.Value), e.copyOf(r.Key)
	}
	return r
}

// copyOf is p in e's arena: nil stays nil and empty stays empty (which
// Arena.Copy does not keep apart).
func (e *edge) copyOf(p []byte) []byte {
	switch {
	case p == nil:
		return nil
	case len(p) == 0:
		return []byte{}
	}
	return e.arena.Copy(p)
}

// output implements runtime.Output. It buffers per downstream channel and
// sends a batch when it is full, when the subtask is about to wait for
// input, and before any control event, so records keep their order relative
// to barriers. Emit blocks while downstream is full (backpressure). Used
// only from the subtask's goroutine.
type output struct {
	edges []*edge // every edge: flushes and control events go to all
	main  []*edge // the edges of the main output
	// direct is main's only edge when it has one target and keys nothing
	// (what emit does for it, without the loop and the switch).
	direct  *edge
	side    map[string][]*edge
	done    <-chan struct{}
	err     error
	pending int64 // records emitted since the last publish
	// forwarded is the last batch ForwardBatch took over: the subtask
	// must not release it (handleEvent).
	forwarded *runtime.Batch
	// sentBatches counts the batches pushed into readers' gates (read by
	// a source recycling its Values off the chain, handback.go).
	sentBatches atomic.Int64
	counter     *atomic.Int64
}

func newOutput(edges []*edge, done <-chan struct{}, counter *atomic.Int64) *output {
	o := &output{edges: edges, done: done, counter: counter}
	for _, e := range edges {
		e.bufs = make([]*runtime.Batch, len(e.targets))
		if e.tag == "" {
			o.main = append(o.main, e)
			continue
		}
		if o.side == nil {
			o.side = map[string][]*edge{}
		}
		o.side[e.tag] = append(o.side[e.tag], e)
	}
	if len(o.main) == 1 && len(o.main[0].targets) == 1 && o.main[0].key == nil {
		o.direct = o.main[0]
	}
	return o
}

// Emit sends r on the main output.
func (o *output) Emit(r runtime.Record) {
	// Most outputs have one edge to one reader. This repeats the end of
	// emit on purpose: a shared helper is not inlined (+1% instructions
	// on Nexmark q1).
	if e := o.direct; e != nil {
		o.pending++
		b := e.bufs[0]
		if b == nil {
			b = newBatch()
			e.bufs[0] = b
		}
		if e.rewrite {
			r = e.rewritten(r)
		}
		b.Records = append(b.Records, r)
		if len(b.Records) == cap(b.Records) {
			o.send(e, 0)
		}
		return
	}
	o.emit(o.main, r)
}

// ForwardBatch hands b on as it is when the main output is one reader's,
// nothing is buffered for it (records keep their order), and its records
// need no rewriting.
func (o *output) ForwardBatch(b *runtime.Batch) bool {
	e := o.direct
	if e == nil || e.rewrite || e.bufs[0] != nil || cap(b.Records) != runtime.DefaultBatchSize || len(b.Records) == 0 {
		return false
	}
	o.pending += int64(len(b.Records))
	o.forwarded = b
	e.bufs[0] = b
	o.send(e, 0)
	return true
}

// tookOver reports whether ForwardBatch took b over, and forgets it.
func (o *output) tookOver(b *runtime.Batch) bool {
	if o.forwarded != b {
		return false
	}
	o.forwarded = nil
	return true
}

// EmitTo sends r on side output tag (nowhere when nothing reads it).
func (o *output) EmitTo(tag string, r runtime.Record) {
	if es := o.side[tag]; es != nil {
		o.emit(es, r)
	}
}

func (o *output) emit(edges []*edge, r runtime.Record) {
	o.pending++
	for _, e := range edges {
		rec := r // the other edges keep the record's own key
		if e.key != nil {
			e.keyed = r
			err := keyRecord(e.key, &e.keyed)
			rec, e.keyed = e.keyed, runtime.Record{}
			if err != nil {
				o.fail(err)
				continue
			}
		}
		var t int
		switch e.part {
		case Hash:
			if len(e.targets) > 1 { // one target: every key group is its
				t = state.SubtaskForKeyGroup(e.maxPar, len(e.targets), state.KeyGroup(rec.Key, e.maxPar))
			}
		case Rebalance:
			t = e.rr
		}
		if e.rewrite {
			rec = e.rewritten(rec)
		}
		b := e.bufs[t]
		if b == nil {
			b = newBatch()
			e.bufs[t] = b
		}
		b.Records = append(b.Records, rec)
		if len(b.Records) == cap(b.Records) {
			o.send(e, t)
			if e.part == Rebalance {
				e.rr = (e.rr + 1) % len(e.targets)
			}
		}
	}
}

// EmitBatch sends every record of b (b stays owned by the caller).
func (o *output) EmitBatch(b *runtime.Batch) {
	for i := range b.Records {
		o.Emit(b.Records[i])
	}
}

// Err returns the first error met sending (ErrCanceled when canceled).
func (o *output) Err() error { return o.err }

func (o *output) send(e *edge, t int) {
	b := e.bufs[t]
	e.bufs[t] = nil
	if o.err != nil {
		releaseBatch(b)
		return
	}
	b.Input = e.input
	if l := e.targets[t].local; l != nil {
		// A chained reader has no input queue to run dry: it passes its
		// output on after every batch, as a subtask whose gate is empty.
		if err := l.deliver(Event{Kind: EventBatch, Batch: b}, e.targets[t].channel); err != nil {
			o.err = err
		} else if err := l.out.Flush(); err != nil {
			o.err = err
		}
		return
	}
	o.sentBatches.Add(1)
	if err := e.targets[t].gate.Push(e.targets[t].channel, Event{Kind: EventBatch, Batch: b}, o.done); err != nil {
		o.err = err
	}
}

// buffered reports whether a record waits in one of o's buffers.
func (o *output) buffered() bool {
	for _, e := range o.edges {
		for _, b := range e.bufs {
			if b != nil && len(b.Records) > 0 {
				return true
			}
		}
	}
	return false
}

// Flush sends every non-empty buffer.
func (o *output) Flush() error {
	for _, e := range o.edges {
		for t, b := range e.bufs {
			if b != nil && len(b.Records) > 0 {
				o.send(e, t)
			}
		}
	}
	o.publish()
	return o.err
}

func (o *output) publish() {
	if o.pending > 0 && o.counter != nil {
		o.counter.Add(o.pending)
		o.pending = 0
	}
}

// Broadcast flushes, then sends a control event to every downstream channel.
func (o *output) Broadcast(ev Event) error {
	if err := o.Flush(); err != nil {
		return err
	}
	for _, e := range o.edges {
		for _, t := range e.targets {
			if t.local != nil {
				if err := t.local.deliver(ev, t.channel); err != nil {
					o.err = err
					return err
				}
				continue
			}
			if err := t.gate.Push(t.channel, ev, o.done); err != nil {
				o.err = err
				return err
			}
		}
	}
	return nil
}
