package engine

import (
	"slices"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Value reuse off the chain. A source whose readers all run in its chain
// writes each batch over the last (planValueReuse). A job as users write
// it chains nothing: the source's batches cross a channel to a reader on
// another goroutine, the source cannot know when their Values are read
// for the last time, and so reads every file into new memory, which the
// garbage collector then collects (while it marks, every record written
// into a batch also pays a write barrier). File source → discard ran at
// ~0.13–0.2 of a plain Go loop over the same files, 40% of its CPU in
// allocation, clearing and write barriers.
//
// Here the readers hand the batches back by counting them. When a source's
// records go, forward and one to one, to a reader that drops their Values
// (a sink, a map: runtime.ValuesDropped), possibly through readers that
// forward them as they are (a filter: runtime.ValuesForwarded), each such
// reader publishes how many of its input batches nothing reads any more
// (subtask.handedBack): the last one, every batch whose Process returned;
// one that forwards, the batches whose records went out in batches its
// own reader handed back (a handQueue maps one count to the other). The
// source maps its reader's count back to its Polls the same way and tells
// the source (runtime.PollRecycler) which Polls' Values it may overwrite,
// as it does in a chain after each batch. Counters only: no batch goes
// back, nothing blocks, and a reader that lags only delays the reuse (the
// source reads into new memory meanwhile, as before).
//
// The ownership contract this relies on is the one of runtime.Record and
// Plan.InputValues: an operator that keeps a record's bytes after the
// Process call that handed them over copies them; one that forwards them
// (emits the record as it is) keeps nothing either, and its readers are
// held to the same rule. Only the source's memory is recycled; batches
// (the []Record) go back to the pool as before.

// planHandBack gives each source whose Values may be recycled off the chain
// its readers (Vertex.handBack), under the rule above. A source that
// recycles in its chain, or has a reader in its chain, keeps to that.
func (g *Graph) planHandBack() {
	for _, v := range g.Vertices {
		if v.Plan.NewSource == nil || v.recycles || headsChain(v, g.Vertices) {
			continue
		}
		v.handBack = handBackPath(v, g.Vertices)
	}
}

// handBackPath returns the readers the Values of source v reach, in order,
// when the last drops them and every one before forwards them; nil when
// they may reach something else or be kept.
func handBackPath(v *Vertex, vs []*Vertex) []*Vertex {
	var path []*Vertex
	for cur := v; ; {
		o := soleForwardReader(cur, vs)
		if o == nil {
			return nil
		}
		path = append(path, o)
		switch use := o.Plan.InputValues; {
		case use == runtime.ValuesDropped, o.valuesUnread, use != runtime.ValuesMayBeKept && len(o.Outputs) == 0:
			return path
		case use == runtime.ValuesForwarded, use == runtime.ValuesUnread:
			cur = o // it forwards them: they go where its records go
		default:
			return nil
		}
	}
}

// soleForwardReader is the one reader of cur's records when it reads them
// one to one from cur's main output, reads nothing else, and runs on a
// goroutine of its own with nothing chained to it; nil otherwise.
func soleForwardReader(cur *Vertex, vs []*Vertex) *Vertex {
	if len(cur.Outputs) != 1 {
		return nil
	}
	o := cur.Outputs[0]
	if o.chainHead != nil || headsChain(o, vs) || len(o.Inputs) != 1 {
		return nil
	}
	if in := o.Inputs[0]; in.From != cur || in.Part != Forward || in.Side != "" || o.Parallelism != cur.Parallelism {
		return nil
	}
	return o
}

// headsChain reports whether a vertex of vs runs in v's chain.
func headsChain(v *Vertex, vs []*Vertex) bool {
	return slices.ContainsFunc(vs, func(o *Vertex) bool { return o.chainHead == v })
}

// wireHandBack links each subtask of a source with a hand-back path to
// the subtask of the path's first reader with its own index (the edges
// are one to one), that one to the next, and so on; the readers count.
func (e *execution) wireHandBack(byVertex [][]*subtask) {
	for _, v := range e.g.Vertices {
		if v.handBack == nil {
			continue
		}
		for i, t := range byVertex[v.Index] {
			if _, ok := t.src.(runtime.PollRecycler); !ok {
				break
			}
			for _, o := range v.handBack {
				r := byVertex[o.Index][i]
				r.handsBack = true
				t.handTo, t = r, r
			}
		}
	}
}

// handQueue remembers, for a subtask of a hand-back path, how many of its
// units (a source's Polls, a reader's input batches) it had handled when
// it had sent a number of batches, nothing of those units left in its
// output buffers: once its reader hands back that many batches, that many
// units are handed back.
type handQueue []handMark

type handMark struct{ units, sent int64 }

// maxHandMarks bounds a queue; past it the latest mark moves on (its
// units wait for later batches: safe, later).
const maxHandMarks = 256

// note records units handled with sent batches sent.
func (q *handQueue) note(units, sent int64) {
	m := handMark{units: units, sent: sent}
	if n := len(*q); n == maxHandMarks {
		(*q)[n-1] = m
		return
	}
	*q = append(*q, m)
}

// take returns the units handed back now that the reader handed back
// done batches, beyond those take returned before (0: none more).
func (q *handQueue) take(done int64) int64 {
	i := 0
	for i < len(*q) && (*q)[i].sent <= done {
		i++
	}
	if i == 0 {
		return 0
	}
	units := (*q)[i-1].units
	*q = append((*q)[:0], (*q)[i:]...)
	return units
}

// polled notes a source's Poll handled. With records of it still in the
// output buffers, the next Poll that ends with none covers it.
func (t *subtask) polled() {
	t.handUnits++
	if !t.out.buffered() {
		t.handQ.note(t.handUnits, t.out.sentBatches.Load())
	}
}

// pollsHandedBack returns how many of source t's first Polls emitted
// Values no reader reads any more, beyond those returned before (0: none
// more).
func (t *subtask) pollsHandedBack() int64 {
	if len(t.handQ) == 0 {
		return 0
	}
	return t.handQ.take(t.handTo.handedBack.Load())
}

// batchDone counts an input batch reader t handled and publishes what it
// hands back: a reader that drops the Values, every batch handled; one
// that forwards them, the batches whose records its own reader has handed
// back (those still in its output buffers wait for a later batch, or
// for the flush before it waits for input: handsBackFlushed).
func (t *subtask) batchDone() {
	t.handUnits++
	if t.handTo == nil {
		t.handedBack.Store(t.handUnits)
		return
	}
	t.handsBackFlushed()
}

// handsBackFlushed is batchDone's part for a forwarding reader, also run
// once its output is flushed.
func (t *subtask) handsBackFlushed() {
	if t.handTo == nil {
		return
	}
	if !t.out.buffered() {
		t.handQ.note(t.handUnits, t.out.sentBatches.Load())
	}
	if n := t.handQ.take(t.handTo.handedBack.Load()); n > 0 {
		t.handedBack.Store(n)
	}
}
