package engine

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Operator chaining (docs/chaining.md), when the job asks for it: a
// subtask that reads only its producer, one to one, and holds nothing a
// goroutine of its own is needed for (timers, checkpoint callbacks) runs
// on its producer's goroutine. The producer hands it each
// batch, barrier and watermark by calling it (target.local) instead of
// pushing into its gate. It is still a subtask: it opens, snapshots,
// acknowledges, counts and fails as itself.

// chainable reports whether the subtasks of v may run on the goroutines
// of the subtasks they read: v reads one producer one to one, and its
// operator (newOp makes one) has no part that needs the subtask's own
// loop or must not wait on the producer's goroutine.
func chainable(v *Vertex, newOp func() runtime.Operator) bool {
	if v.Plan.NewSource != nil || newOp == nil || v.Plan.GlobalKey || len(v.Inputs) != 1 {
		return false
	}
	if in := v.Inputs[0]; in.Side != "" || in.Key != nil || !oneToOne(v, in) {
		return false
	}
	// A WatermarkListener alone may chain: it hears the watermark when
	// the watermark reaches it, as a chained subtask's event from its
	// head; timers (processing-time ones fire from the subtask's own
	// loop) may not.
	switch newOp().(type) {
	case runtime.CheckpointListener, runtime.Snapshotter, runtime.StopPreparer, runtime.TimerListener:
		return false
	}
	return true
}

// oneToOne reports whether each subtask of v reads the producer subtask
// of its own index and no other: a forward edge, or a keyed one (a
// keyBy's) from parallelism 1 to 1, where the one reader owns every key
// group. A keyed operator chained so keeps its keyed state on its head's
// goroutine, where it also snapshots it; at another parallelism (a restore
// may change it: chaining is in no snapshot) it runs unchained.
func oneToOne(v *Vertex, in Input) bool {
	switch in.Part {
	case Forward:
		return !v.Plan.KeyedInput
	case Hash:
		return v.Plan.KeyedInput && v.Parallelism == 1 && in.From.Parallelism == 1
	}
	return false
}

// chain gives every chainable vertex its chain's head: the vertex it reads,
// or that one's head. Vertices are in topological order, so a producer's
// head is known before its readers.
func (g *Graph) chain() {
	if !g.Spec.Chaining {
		return
	}
	for _, v := range g.Vertices {
		if !chainable(v, v.Plan.NewOperator) {
			continue
		}
		h := v.Inputs[0].From
		if h.chainHead != nil {
			h = h.chainHead
		}
		v.chainHead = h
	}
	g.planValueReuse()
}

// planValueReuse decides for every source whether it may write each
// batch over the last one (Vertex.recycles, runtime.ValueRecycler), and
// which vertices must then copy the records they send off the chain
// (Vertex.copiesOut). A source may when its readers are all in its chain
// and carriesInChain holds for it.
//
// An operator in a source's chain may as well, under the same rule, for
// the Values it emits (a map's results): the source's goroutine has sent
// every batch through the whole chain, so nothing of what the operator
// emitted is read once it has no record buffered (runSource).
func (g *Graph) planValueReuse() {
	for _, v := range g.Vertices {
		head := v
		switch {
		case v.Plan.NewSource != nil:
		case v.chainHead != nil && v.chainHead.Plan.NewSource != nil:
			head = v.chainHead
		default:
			continue
		}
		if len(v.Outputs) == 0 || slices.ContainsFunc(v.Outputs, func(o *Vertex) bool { return o.chainHead != head }) {
			continue
		}
		var carriers []*Vertex
		if carriesInChain(v, head, &carriers) {
			v.recycles = true
			for _, c := range carriers {
				c.copiesOut = true
			}
		}
	}
}

// planUnreadValues marks the vertices that are sent records without
// Values (Vertex.valuesUnread).
func (g *Graph) planUnreadValues() {
	for _, v := range g.Vertices {
		v.valuesUnread = valuesUnread(v, g.Vertices)
	}
}

// valuesUnread reports whether v is sent records without Values: it is
// not chained (in a chain its records are handed over as they are, and
// sparing them saves nothing), it reads none of its input records' Values
// (runtime.ValuesUnread), and none of its side outputs, which may carry
// them, is read by one of vs.
func valuesUnread(v *Vertex, vs []*Vertex) bool {
	if v.chainHead != nil || v.Plan.InputValues != runtime.ValuesUnread {
		return false
	}
	return !slices.ContainsFunc(vs, func(r *Vertex) bool {
		return slices.ContainsFunc(r.Inputs, func(in Input) bool { return in.From == v && in.Side != "" })
	})
}

// carriesInChain reports whether the source records v emits (with the
// Values of head, the source) are read nowhere once head's chain has
// handled their batch, given that every vertex it appends to carriers
// copies what it sends off the chain: each reader of v in the chain drops
// them or forwards them under the same rule (Plan.InputValues), and a
// reader off the chain (on its own goroutine, of a side output, keyed)
// gets copies. An operator in the chain that claims nothing says no.
func carriesInChain(v, head *Vertex, carriers *[]*Vertex) bool {
	*carriers = append(*carriers, v)
	for _, o := range v.Outputs {
		if o.chainHead != head {
			continue // off the chain: v copies what it sends o
		}
		switch o.Plan.InputValues {
		case runtime.ValuesDropped:
		case runtime.ValuesForwarded, runtime.ValuesUnread: // one whose side outputs are read forwards
			if !carriesInChain(o, head, carriers) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// chainTasks puts each subtask of a chained vertex in the chain of the
// subtask of its head with the same index (every edge of a chain is one
// to one: forward, or keyed from parallelism 1 to 1).
func (e *execution) chainTasks(byVertex [][]*subtask) {
	for _, v := range e.g.Vertices {
		if v.chainHead == nil {
			continue
		}
		for i, t := range byVertex[v.Index] {
			h := byVertex[v.chainHead.Index][i]
			t.head = h
			h.chain = append(h.chain, t)
		}
	}
}

// deliver runs a chained subtask's handling of ev, on its head's
// goroutine; its errors, and its panics, are its own.
func (t *subtask) deliver(ev Event, ch int) error {
	return t.guard(func() error {
		if t.finished {
			if ev.Kind == EventBatch {
				releaseBatch(ev.Batch)
			}
			return nil
		}
		done, err := t.handleEvent(ev, ch)
		t.finished = done
		return err
	})
}

// guard runs fn, a chained subtask's part of its head's work, and makes
// what goes wrong in it t's failure: an error, or a panic (which would
// otherwise unwind the head's goroutine in the head's name).
func (t *subtask) guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = t.failure(panicked(r))
		}
	}()
	return t.failure(fn())
}

// panicked is the error a recovered panic r fails its subtask with.
func panicked(r any) error { return fmt.Errorf("panic: %v\n%s", r, debug.Stack()) }

// failure attributes err to t (a cancellation, or a failure already
// attributed, stays as it is).
func (t *subtask) failure(err error) error {
	var f *Failure
	if err == nil || errors.Is(err, ErrCanceled) || errors.As(err, &f) {
		return err
	}
	return &Failure{UID: t.v.Op.UID, Subtask: t.index, Err: err}
}

// openChain opens the subtasks t runs, after t itself. One that fails to
// open is closed all the same, as a subtask of its own would be.
func (t *subtask) openChain() error {
	for _, m := range t.chain {
		m.opened = true
		if err := m.guard(m.open); err != nil {
			return err
		}
	}
	return nil
}

// closeChain closes every subtask t runs that it opened, whatever the
// others' Close does, and returns the first failure.
func (t *subtask) closeChain() error {
	var err error
	for _, m := range t.chain {
		if !m.opened {
			continue
		}
		if cerr := m.guard(m.close); err == nil {
			err = cerr
		}
		m.out.publish()
	}
	return err
}

// notifyChain gives the subtasks t runs a checkpoint's outcome, readers
// before writers, as execution.notify does for the others.
func (t *subtask) notifyChain(c *Control) error {
	for i := len(t.chain) - 1; i >= 0; i-- {
		if m := t.chain[i]; !m.finished {
			if err := m.guard(func() error { return m.handleOperatorControl(c) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// chainSpent is where the time of t's goroutine went: for a subtask of a
// chain, the head's waits plus what its members waited for room
// downstream (charged to them, the producers of those channels); for any
// other, its own.
func (t *subtask) chainSpent() (busy, backPressured, idle int64) {
	h := t
	if t.head != nil {
		h = t.head
	}
	busy, backPressured, idle = h.times.spent()
	for _, m := range h.chain {
		_, bp, _ := m.times.spent()
		busy, backPressured = max(busy-bp, 0), backPressured+bp
	}
	return busy, backPressured, idle
}
