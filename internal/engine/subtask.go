package engine

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/runtime"
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
	out     *output
	ctx     *runtime.Context
	state   *state.OperatorState // restored before Open; what the operator snapshots
	keyed   *state.KeyedBackend  // nil unless the input is keyed
	incr    *incremental         // a pebble subtask's incremental checkpoints; nil: canonical
	wake    chan struct{}
	src     runtime.Source
	op      runtime.Operator
	aligner *Aligner

	recordsIn  atomic.Int64
	recordsOut atomic.Int64
	gauges     runtime.Metrics
	clock      clock
	times      taskTimes // busy, backpressured, idle (busytime.go)

	// Chaining (chain.go): head runs this subtask on its goroutine (nil:
	// its own); chain is what a head runs, each after the one it reads.
	head     *subtask
	chain    []*subtask
	opened   bool // a chain member's operator opened (its head closes it)
	finished bool // a chain member handled its last event

	// Value reuse off the chain (handback.go): handTo is the next subtask
	// of a source's hand-back path (nil: none, or the last); handsBack
	// marks its readers. handUnits counts the source's Polls or the
	// reader's input batches; handedBack publishes how many of a reader's
	// input batches nothing reads any more.
	handTo     *subtask
	handsBack  bool
	handUnits  int64
	handQ      handQueue
	handedBack atomic.Int64

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
	t.times.begin(waitInput) // an ended subtask waits for nothing, for good
	t.exec.taskDone(t, err)
	for _, m := range t.chain {
		m.times.begin(waitInput)
		t.exec.taskDone(m, err) // nil: the chain finished; else it failed with t
	}
}

func (t *subtask) runProtected() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicked(r)
		}
		if t.exec.cancelled() && (err == nil || errors.Is(err, ErrCanceled)) {
			err = ErrCanceled
		}
		err = t.failure(err)
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
	if err := t.setUpTime(); err != nil {
		return err
	}
	t.ctx = t.exec.newContext(t)
	if err := t.exec.env().Fire("task.open", t.v.Op.UID, t.index); err != nil {
		return err
	}
	var err error
	if t.src != nil {
		err = t.src.Open(t.ctx)
	} else {
		err = t.op.Open(t.ctx)
	}
	if err != nil {
		return err
	}
	t.exec.opened.Add(1) // see Job.Started
	return t.openChain()
}

func (t *subtask) close() (err error) {
	defer func() { // the chain is closed even when t's Close panics
		if cerr := t.closeChain(); err == nil {
			err = cerr
		}
	}()
	defer func() { // after the operator: its Close may still read state
		if t.keyed != nil {
			if cerr := t.keyed.Close(); err == nil {
				err = cerr
			}
		}
	}()
	t.stopTime()
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
	if t.clock.gen != nil {
		t.refreshSplits(time.Now())
	}
	direct := t.directEdge()
	// recycler: the source may reuse its Values' bytes once its chain has
	// handled a batch: once the batch is sent (to chained readers, a call)
	// and nothing of it is pending in an output buffer; what left the
	// chain was copied (planValueReuse).
	recyclers := t.recyclers()
	// handBack: or, off the chain, once its readers are done with what
	// it sent them (handback.go).
	var handBack runtime.PollRecycler
	if t.handTo != nil {
		handBack = t.src.(runtime.PollRecycler)
	}
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
		if handBack != nil {
			if n := t.pollsHandedBack(); n > 0 {
				handBack.RecycleValuesUpTo(n)
			}
		}
		b := newBatch()
		perr := t.poll(b)
		if t.clock.et != nil && len(b.Records) > 0 {
			if err := t.stampRecords(b, time.Now()); err != nil {
				releaseBatch(b)
				return err
			}
		}
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
				releaseBatch(b)
				if len(recyclers) > 0 {
					_ = t.out.Flush() // its error is Err's, below
				}
			}
			if len(recyclers) > 0 && t.out.Err() == nil {
				recycleValues(recyclers)
			}
		} else {
			releaseBatch(b)
		}
		if err := t.out.Err(); err != nil {
			return err
		}
		if handBack != nil {
			t.polled()
		}
		if err := t.sourceWatermark(time.Now()); err != nil {
			return err
		}
		if errors.Is(perr, runtime.ErrEndOfInput) {
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

// recycler is a source, or an operator of its chain, whose Values may be
// written over once the chain has handled a batch (Vertex.recycles).
type recycler struct {
	r   runtime.ValueRecycler
	out *output // an operator's: it recycles only when it buffers nothing
}

// recyclers returns those of source t's chain.
func (t *subtask) recyclers() []recycler {
	var rs []recycler
	if r, ok := t.src.(runtime.ValueRecycler); ok && t.v.recycles {
		rs = append(rs, recycler{r: r})
	}
	for _, c := range t.chain {
		if r, ok := c.op.(runtime.ValueRecycler); ok && c.v.recycles {
			rs = append(rs, recycler{r: r, out: c.out})
		}
	}
	return rs
}

// recycleValues tells each of rs that the Values it emitted are dead: the
// source's batch went through the whole chain and was flushed, so only
// an operator's records emitted outside it (by a timer, with nothing
// after it to flush them) can still be buffered; such an operator waits.
func recycleValues(rs []recycler) {
	for _, r := range rs {
		if r.out == nil || !r.out.buffered() {
			r.r.RecycleValues()
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

// sendEndOfData ends the subtask's output: every timer fires (the
// watermark reaches its maximum; processing-time timers too), the operator
// finishes, and the final watermark and end of data go downstream.
func (t *subtask) sendEndOfData() error {
	if t.endOfData {
		return nil
	}
	t.endOfData = true
	c := &t.clock
	c.inWM.Store(runtime.MaxWatermark)
	// At the end of input all time has passed: processing-time timers fire
	// too (a processing-time window's last results).
	if err := t.fireTimers(runtime.EventTime, runtime.MaxWatermark); err != nil {
		return err
	}
	if err := t.fireTimers(runtime.ProcessingTime, runtime.MaxWatermark); err != nil {
		return err
	}
	if f, ok := t.op.(runtime.Finisher); ok {
		if err := f.Finish(t.sinkOrOutput()); err != nil {
			return err
		}
	}
	if c.outWM.Load() != runtime.MaxWatermark {
		c.outWM.Store(runtime.MaxWatermark)
		if err := t.out.Broadcast(Event{Kind: EventWatermark, Watermark: runtime.MaxWatermark}); err != nil {
			return err
		}
	}
	return t.out.Broadcast(Event{Kind: EventEndOfData})
}

// handleSourceControl handles a control message in a source subtask; done
// reports that the subtask has finished.
func (t *subtask) handleSourceControl(c *Control) (done bool, err error) {
	if c.Kind != CtrlTrigger {
		if err := t.notifyChain(c); err != nil {
			return false, err
		}
	}
	switch c.Kind {
	case CtrlTrigger:
		b := c.Barrier
		if b.Kind.Terminal() && c.Drain && !t.endOfData {
			if err := t.sendEndOfData(); err != nil {
				return false, err
			}
		}
		if err := t.prepareStop(b); err != nil {
			return false, err
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
			if t.handsBack {
				t.handsBackFlushed()
			}
			wake, err := t.processingTimers(time.Now())
			if err != nil {
				return err
			}
			if it, ok, err = t.gate.NextBefore(t.exec.done, wake); err != nil {
				return err
			}
			if !ok {
				continue // a processing-time timer is due
			}
		} else if t.clock.timers != nil && t.clock.timers.proc.Len() > 0 {
			if _, err := t.processingTimers(time.Now()); err != nil {
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
	if err := t.notifyChain(c); err != nil {
		return err
	}
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
		switch {
		case t.out.tookOver(ev.Batch): // forwarded as it is (runtime.BatchForwarder)
		case t.handsBack:
			releaseHandedBack(ev.Batch)
		default:
			releaseBatch(ev.Batch)
		}
		if perr != nil {
			return false, perr
		}
		if t.handsBack {
			t.batchDone()
		}
		return false, t.out.Err()
	case EventBarrier:
		return false, t.apply(t.aligner.OnBarrier(ch, ev.Barrier))
	case EventWatermark:
		return false, t.onWatermarkEvent(ev, ch)
	case EventEndOfData:
		return false, t.channelDataEnded(ch)
	case EventEndOfPartition:
		// After end of data (the input ended, or stop --drain) this only
		// closes the channel. Without it the job was stopped with a
		// savepoint: the input did not end, so no timer fires and nothing
		// finishes (Flink emits no final watermark on stop without
		// drain); what would fire is in the savepoint, for the job that
		// resumes from it.
		t.channelStopped(ch)
		if err := t.apply(t.aligner.OnEndOfPartition(ch)); err != nil {
			return false, err
		}
		if t.aligner.AllEnded() {
			return true, t.out.Broadcast(Event{Kind: EventEndOfPartition})
		}
	}
	return false, nil
}

// channelStopped marks a channel that ends without end of data: it holds
// nothing back any more, and ends nothing.
func (t *subtask) channelStopped(ch int) {
	if !t.dataEnded[ch] {
		t.dataEnded[ch] = true
		t.dataEndedN++
	}
}

func (t *subtask) channelDataEnded(ch int) error {
	if t.dataEnded[ch] {
		return nil
	}
	t.dataEnded[ch] = true
	t.dataEndedN++
	if t.dataEndedN < len(t.dataEnded) {
		// An ended input no longer holds the watermark back (when all end,
		// end of data below takes it to the maximum).
		if err := t.applyWatermark(t.clock.tracker.OnEnd(ch)); err != nil {
			return err
		}
	}
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
	if err := t.prepareStop(d.Barrier); err != nil {
		return err
	}
	if s, ok := t.op.(runtime.Snapshotter); ok {
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
	var db *dbCapture // an incremental checkpoint's DB files
	switch {
	case t.incr != nil && b.Dir != "" && !b.Kind.IsSavepoint():
		data, sum = state.EncodeChunksWithoutStore(t.state, t.keyed)
		var err error
		if db, err = t.incr.capture(t.keyed, b.ID); err != nil {
			t.exec.decline(t, b.ID, err)
			return fmt.Errorf("snapshot for checkpoint %d: %w", b.ID, err)
		}
	case !state.Stateless(t.state, t.keyed):
		data, sum = state.EncodeChunks(t.state, t.keyed)
	}
	h := checkpoint.Handle{Task: t.id, UID: t.v.Op.UID, Subtask: t.index, Keys: sum.Keys, TimerKeys: sum.TimerKeys, Lists: sum.Lists}
	if sum.KeyGroups != nil {
		h.KeyStart, h.KeyEnd = sum.KeyGroups.Start, sum.KeyGroups.End
	}
	var describer runtime.StateDescriber
	if t.src != nil {
		describer, _ = t.src.(runtime.StateDescriber)
	} else {
		describer, _ = t.op.(runtime.StateDescriber)
	}
	if describer != nil {
		h.Details = describer.DescribeState()
	}
	if err := t.out.Broadcast(Event{Kind: EventBarrier, Barrier: b}); err != nil {
		return err
	}
	t.exec.writeState(t, b, h, data, db)
	return nil
}

func (t *subtask) notifyComplete(id int64) error {
	if err := t.exec.env().Fire("task.notify-complete", t.v.Op.UID, t.index, id); err != nil {
		return fmt.Errorf("notify checkpoint %d complete: %w", id, err)
	}
	var l runtime.CheckpointListener
	if t.src != nil {
		l, _ = t.src.(runtime.CheckpointListener)
	} else {
		l, _ = t.op.(runtime.CheckpointListener)
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
	var l runtime.CheckpointListener
	if t.src != nil {
		l, _ = t.src.(runtime.CheckpointListener)
	} else {
		l, _ = t.op.(runtime.CheckpointListener)
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
