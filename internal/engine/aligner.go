package engine

// Aligner decides what a subtask with several input channels does when a
// barrier or the end of a channel arrives (Flink's CheckpointBarrierHandler).
// It is pure: the task loop applies its answers to the gate and operator.
//
// Exactly-once: a channel that delivered barrier n is blocked until every
// live channel has delivered it, so the snapshot covers exactly the records
// before the barrier on each channel. At-least-once: nothing blocks; the
// snapshot is taken when the last barrier arrives (records after a barrier on
// a fast channel may be in the snapshot and replayed after recovery).
type Aligner struct {
	exactlyOnce bool
	seen        []bool // channel delivered the current barrier
	ended       []bool // channel delivered end of partition
	seenCount   int
	endedCount  int
	current     Barrier // barrier being aligned; ID 0 when none
	done        int64   // highest checkpoint id snapshotted or abandoned
}

// NewAligner returns an aligner for channels inputs.
func NewAligner(channels int, exactlyOnce bool) *Aligner {
	return &Aligner{exactlyOnce: exactlyOnce, seen: make([]bool, channels), ended: make([]bool, channels)}
}

// Decision is what the task must do after an aligner step, in this order:
// decline an abandoned checkpoint, unblock all channels, block one channel,
// snapshot and forward the barrier. (The task pulls nothing in between, so
// unblocking before the snapshot is safe.)
type Decision struct {
	Abandon    int64 // decline this pending checkpoint (subsumed by a newer one)
	Block      int   // block this channel; -1 for none
	Snapshot   bool  // all barriers arrived: snapshot Barrier and forward it
	Barrier    Barrier
	UnblockAll bool
}

var noDecision = Decision{Block: -1}

// Pending returns the id of the checkpoint being aligned, or 0.
func (a *Aligner) Pending() int64 { return a.current.ID }

// OnBarrier handles barrier b from channel ch.
func (a *Aligner) OnBarrier(ch int, b Barrier) Decision {
	d := noDecision
	switch {
	case b.ID <= a.done:
		return d // older than one already handled: a late barrier of an abandoned checkpoint
	case b.ID < a.current.ID:
		return d // older than the one being aligned: it must not count for it (its abort is on the way)
	case b.ID > a.current.ID:
		if a.current.ID != 0 {
			d.Abandon = a.current.ID
			a.done = a.current.ID
			d.UnblockAll = a.exactlyOnce
		}
		a.reset()
		a.current = b
	}
	if a.seen[ch] {
		return d // duplicate barrier on one channel: ignore
	}
	a.seen[ch] = true
	a.seenCount++
	if a.complete() {
		return a.finish(d)
	}
	if a.exactlyOnce {
		d.Block = ch
	}
	return d
}

// OnEndOfPartition handles the end of channel ch: an ended channel no
// longer owes barriers.
func (a *Aligner) OnEndOfPartition(ch int) Decision {
	if a.ended[ch] {
		return noDecision
	}
	a.ended[ch] = true
	a.endedCount++
	if a.current.ID != 0 && !a.seen[ch] && a.complete() {
		return a.finish(noDecision)
	}
	return noDecision
}

// OnAbort handles the job's notice that checkpoint id was aborted: stop
// waiting for its barriers.
func (a *Aligner) OnAbort(id int64) Decision {
	if id > a.done {
		a.done = id
	}
	if a.current.ID == 0 || a.current.ID > id {
		return noDecision
	}
	a.reset()
	return Decision{Block: -1, UnblockAll: a.exactlyOnce}
}

// AllEnded reports whether every channel delivered end of partition.
func (a *Aligner) AllEnded() bool { return a.endedCount == len(a.ended) }

func (a *Aligner) complete() bool {
	live := 0
	for i := range a.seen {
		if !a.ended[i] && !a.seen[i] {
			live++
		}
	}
	return live == 0
}

func (a *Aligner) finish(d Decision) Decision {
	d.Snapshot = true
	d.Barrier = a.current
	d.UnblockAll = a.exactlyOnce
	d.Block = -1
	a.done = a.current.ID
	a.reset()
	return d
}

func (a *Aligner) reset() {
	clear(a.seen)
	a.seenCount = 0
	a.current = Barrier{}
}
