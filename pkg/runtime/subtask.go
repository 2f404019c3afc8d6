package runtime

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/runtime/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// subtask is one parallel instance of an operator; its loop runs on its own
// goroutine and is the only code that touches its operator and state.
type subtask struct {
	exec  *execution
	v     *Vertex
	index int // subtask index within the operator
	id    int // index among all subtasks of the job (acks)

	gate    *Gate // inputs and control messages
	out     *Output
	ctx     *Context
	wake    chan struct{}
	src     Source
	op      Operator
	aligner *Aligner

	recordsIn  atomic.Int64
	recordsOut atomic.Int64
	gauges     Gauges

	dataEnded   []bool // channel delivered end of data
	dataEndedN  int
	endOfData   bool  // this subtask sent end of data downstream
	terminalID  int64 // source: terminal barrier sent, waiting for its outcome
	terminalEOD bool  // source: the terminal barrier followed end of data
}

func (t *subtask) name() string { return fmt.Sprintf("%s[%d]", t.v.Op.UID, t.index) }

// run is the subtask goroutine. It reports its outcome to the execution.
func (t *subtask) run() {
	err := t.runProtected()
	t.exec.taskDone(t, err)
}

func (t *subtask) runProtected() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
		if t.exec.cancelled() && (err == nil || errors.Is(err, ErrCanceled)) {
			err = ErrCanceled
		}
		if err != nil && !errors.Is(err, ErrCanceled) {
			var f *Failure
			if !errors.As(err, &f) {
				err = &Failure{UID: t.v.Op.UID, Subtask: t.index, Err: err}
			}
		}
	}()
	if t.src != nil {
		return t.runSource()
	}
	return t.runOperator()
}

// open restores state and opens the operator; close is always called.
func (t *subtask) open() error {
	if err := t.exec.restoreInto(t); err != nil {
		return err
	}
	if err := t.exec.env().Fire("task.open", t.v.Op.UID, t.index); err != nil {
		return err
	}
	if t.src != nil {
		return t.src.Open(t.ctx)
	}
	return t.op.Open(t.ctx)
}

func (t *subtask) close() error {
	if t.src != nil {
		return t.src.Close()
	}
	return t.op.Close()
}

func (t *subtask) runSource() (err error) {
	defer func() {
		if cerr := t.close(); err == nil && cerr != nil {
			err = cerr
		}
		t.out.publish()
	}()
	if err := t.open(); err != nil {
		return err
	}
	direct := t.directEdge()
	for {
		for {
			it, ok := t.gate.TryNext()
			if !ok {
				break
			}
			done, err := t.handleSourceControl(it.Control)
			if err != nil || done {
				return err
			}
		}
		if t.endOfData || t.terminalID != 0 {
			// Nothing to poll: wait for the next control message.
			if err := t.out.Flush(); err != nil {
				return err
			}
			it, err := t.gate.Next(t.exec.done)
			if err != nil {
				return err
			}
			done, err := t.handleSourceControl(it.Control)
			if err != nil || done {
				return err
			}
			continue
		}
		if t.exec.cancelled() {
			return ErrCanceled
		}
		b := NewBatch()
		perr := t.src.Poll(b)
		if n := len(b.Records); n > 0 {
			t.recordsIn.Add(int64(n))
			if direct != nil && direct.bufs[0] == nil {
				// One forward output: hand the batch over as is.
				t.out.pending += int64(n)
				direct.bufs[0] = b
				t.out.send(direct, 0)
				t.out.publish()
			} else {
				t.out.EmitBatch(b)
				ReleaseBatch(b)
			}
		} else {
			ReleaseBatch(b)
		}
		if err := t.out.Err(); err != nil {
			return err
		}
		if errors.Is(perr, ErrEndOfInput) {
			if err := t.sendEndOfData(); err != nil {
				return err
			}
			t.exec.report(sourceEndedMsg{task: t.id})
			continue
		}
		if perr != nil {
			return perr
		}
	}
}

// directEdge returns the output edge when the source has exactly one
// forward output, so whole batches can be passed on without copying.
func (t *subtask) directEdge() *edge {
	if len(t.out.edges) == 1 && t.out.edges[0].part == Forward {
		return t.out.edges[0]
	}
	return nil
}

func (t *subtask) sendEndOfData() error {
	if t.endOfData {
		return nil
	}
	t.endOfData = true
	if f, ok := t.op.(Finisher); ok {
		if err := f.Finish(t.out); err != nil {
			return err
		}
	}
	return t.out.Broadcast(Event{Kind: EventEndOfData})
}

// handleSourceControl handles a control message in a source subtask; done
// reports that the subtask has finished.
func (t *subtask) handleSourceControl(c *Control) (done bool, err error) {
	switch c.Kind {
	case CtrlTrigger:
		b := c.Barrier
		if b.Kind.Terminal() && c.Drain && !t.endOfData {
			if err := t.sendEndOfData(); err != nil {
				return false, err
			}
		}
		if err := t.src.SnapshotState(b.ID); err != nil {
			t.exec.decline(t, b.ID, err)
			return false, fmt.Errorf("snapshot for checkpoint %d: %w", b.ID, err)
		}
		if err := t.snapshot(b); err != nil {
			return false, err
		}
		if b.Kind.Terminal() {
			t.terminalID = b.ID
		}
	case CtrlComplete:
		if err := t.notifyComplete(c.ID); err != nil {
			return false, err
		}
		if c.ID == t.terminalID {
			return true, t.out.Broadcast(Event{Kind: EventEndOfPartition})
		}
	case CtrlAbort:
		t.notifyAborted(c.ID)
		if c.ID == t.terminalID {
			t.terminalID = 0 // stop failed: resume reading (unless input ended)
		}
	}
	return false, nil
}

func (t *subtask) runOperator() (err error) {
	defer func() {
		if cerr := t.close(); err == nil && cerr != nil {
			err = cerr
		}
		t.out.publish()
	}()
	if err := t.open(); err != nil {
		return err
	}
	for {
		it, ok := t.gate.TryNext()
		if !ok {
			if err := t.out.Flush(); err != nil {
				return err
			}
			if it, err = t.gate.Next(t.exec.done); err != nil {
				return err
			}
		}
		if it.Control != nil {
			if err := t.handleOperatorControl(it.Control); err != nil {
				return err
			}
			continue
		}
		done, err := t.handleEvent(it.Event, it.Channel)
		if err != nil || done {
			return err
		}
	}
}

func (t *subtask) handleOperatorControl(c *Control) error {
	switch c.Kind {
	case CtrlComplete:
		return t.notifyComplete(c.ID)
	case CtrlAbort:
		t.notifyAborted(c.ID)
		t.apply(t.aligner.OnAbort(c.ID))
	}
	return nil
}

func (t *subtask) handleEvent(ev Event, ch int) (done bool, err error) {
	switch ev.Kind {
	case EventBatch:
		n := len(ev.Batch.Records)
		t.recordsIn.Add(int64(n))
		out := t.out
		if len(out.edges) == 0 {
			out = nil
		}
		perr := t.op.Process(ev.Batch, out)
		ReleaseBatch(ev.Batch)
		if perr != nil {
			return false, perr
		}
		return false, t.out.Err()
	case EventBarrier:
		return false, t.apply(t.aligner.OnBarrier(ch, ev.Barrier))
	case EventEndOfData:
		return false, t.channelDataEnded(ch)
	case EventEndOfPartition:
		if err := t.channelDataEnded(ch); err != nil {
			return false, err
		}
		if err := t.apply(t.aligner.OnEndOfPartition(ch)); err != nil {
			return false, err
		}
		if t.aligner.AllEnded() {
			return true, t.out.Broadcast(Event{Kind: EventEndOfPartition})
		}
	}
	return false, nil
}

func (t *subtask) channelDataEnded(ch int) error {
	if t.dataEnded[ch] {
		return nil
	}
	t.dataEnded[ch] = true
	t.dataEndedN++
	if t.dataEndedN < len(t.dataEnded) {
		return nil
	}
	return t.sendEndOfData()
}

// apply carries out an aligner decision.
func (t *subtask) apply(d Decision) error {
	if d.Abandon != 0 {
		t.exec.decline(t, d.Abandon, fmt.Errorf("barrier %d subsumed by a newer barrier during alignment", d.Abandon))
	}
	if d.UnblockAll {
		t.gate.UnblockAll()
	}
	if d.Block >= 0 {
		t.gate.Block(d.Block)
	}
	if !d.Snapshot {
		return nil
	}
	if s, ok := t.op.(Snapshotter); ok {
		if err := s.SnapshotState(d.Barrier.ID); err != nil {
			t.exec.decline(t, d.Barrier.ID, err)
			return fmt.Errorf("snapshot for checkpoint %d: %w", d.Barrier.ID, err)
		}
	}
	return t.snapshot(d.Barrier)
}

// snapshot captures the subtask's state synchronously, forwards the barrier
// and writes and acknowledges the state asynchronously.
func (t *subtask) snapshot(b Barrier) error {
	if err := t.exec.env().Fire("task.snapshot", t.v.Op.UID, t.index, b.ID); err != nil {
		t.exec.decline(t, b.ID, err)
		return fmt.Errorf("snapshot for checkpoint %d: %w", b.ID, err)
	}
	var data *state.Encoded // nil: nothing to write (state.Stateless)
	var sum state.Summary
	if !state.Stateless(t.ctx.State, t.ctx.Keyed) {
		data, sum = state.EncodeChunks(t.ctx.State, t.ctx.Keyed)
	}
	h := checkpoint.Handle{Task: t.id, UID: t.v.Op.UID, Subtask: t.index, Keys: sum.Keys, Lists: sum.Lists}
	if sum.KeyGroups != nil {
		h.KeyStart, h.KeyEnd = sum.KeyGroups.Start, sum.KeyGroups.End
	}
	var describer StateDescriber
	if t.src != nil {
		describer, _ = t.src.(StateDescriber)
	} else {
		describer, _ = t.op.(StateDescriber)
	}
	if describer != nil {
		h.Details = describer.DescribeState()
	}
	if err := t.out.Broadcast(Event{Kind: EventBarrier, Barrier: b}); err != nil {
		return err
	}
	t.exec.writeState(t, b, h, data)
	return nil
}

func (t *subtask) notifyComplete(id int64) error {
	if err := t.exec.env().Fire("task.notify-complete", t.v.Op.UID, t.index, id); err != nil {
		return fmt.Errorf("notify checkpoint %d complete: %w", id, err)
	}
	var l CheckpointListener
	if t.src != nil {
		l, _ = t.src.(CheckpointListener)
	} else {
		l, _ = t.op.(CheckpointListener)
	}
	if l == nil {
		return nil
	}
	if err := l.NotifyCheckpointComplete(id); err != nil {
		return fmt.Errorf("notify checkpoint %d complete: %w", id, err)
	}
	return nil
}

func (t *subtask) notifyAborted(id int64) {
	var l CheckpointListener
	if t.src != nil {
		l, _ = t.src.(CheckpointListener)
	} else {
		l, _ = t.op.(CheckpointListener)
	}
	if l != nil {
		l.NotifyCheckpointAborted(id)
	}
}

// signalWake tells a polling source that a control message is waiting.
func (t *subtask) signalWake() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}
