package engine

import (
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Where a subtask's time goes, with Flink's meanings (busyTimeMsPerSecond,
// backPressuredTimeMsPerSecond, idleTimeMsPerSecond):
//
//   - backpressured: waiting for room in a full output channel (Gate.Push
//     parked on a channel of a downstream gate);
//   - idle: waiting for input (Gate.Next or NextBefore parked with nothing
//     to take, a source's Poll that returned no records, and everything
//     after the subtask ended);
//   - busy: the rest (processing, snapshots, opening the operator).
//
// Only the waits are timed: the fast paths (a channel with room, an input
// ready) read no clock, a parked wait reads it twice, and a source reads it
// twice per Poll. Nothing is counted per record.

// monoEpoch anchors monoNow; time.Since uses the monotonic clock.
var monoEpoch = time.Now()

// monoNow is nanoseconds on the monotonic clock, never 0.
func monoNow() int64 { return int64(time.Since(monoEpoch)) + 1 }

// waitKind is what a subtask waits for.
type waitKind int

const (
	waitInput  waitKind = iota // idle
	waitOutput                 // backpressured
	// waitPoll is a source's Poll in progress: idle if it returns no
	// records, busy otherwise; counted as neither until it returns, so
	// every accumulated figure only grows.
	waitPoll
)

// taskTimes is one subtask's time accounting. Only the subtask's goroutine
// begins and ends its waits (Push runs on the producer's, Next on the
// consumer's), so the totals need no read-modify-write; any goroutine may
// read. end clears the wait in progress before it adds the wait to its
// total, and a reader that finds the waits in progress changed across its
// reading of the totals reads again: it never counts one wait twice, as a
// total and as in progress. The methods accept nil (a gate built without
// accounting, in tests).
type taskTimes struct {
	started int64           // monoNow when the subtask's goroutine was started
	idle    atomic.Int64    // ns in finished waits for input
	bp      atomic.Int64    // ns in finished waits for output
	since   [3]atomic.Int64 // by waitKind: monoNow at the start of the wait in progress; 0: none
}

// begin starts a wait of kind k and returns its start, for end.
func (m *taskTimes) begin(k waitKind) int64 {
	if m == nil {
		return 0
	}
	now := monoNow()
	m.since[k].Store(now)
	return now
}

// end finishes the wait of kind k begun at start; a poll counts as idle
// when it found nothing.
func (m *taskTimes) end(k waitKind, start int64, found bool) {
	if m == nil {
		return
	}
	d := monoNow() - start
	m.since[k].Store(0)
	switch {
	case k == waitInput || k == waitPoll && !found:
		m.idle.Store(m.idle.Load() + d)
	case k == waitOutput:
		m.bp.Store(m.bp.Load() + d)
	}
}

// spent returns the accumulated busy, backpressured and idle time up to
// now, in ns: they add up to the time since the subtask started but a
// poll in progress, and each only grows (but for the instant between the
// clock read of begin or end and its publication, when time may move
// between two of them). The clock is read after the figures, so no wait
// that ended after it is in them.
func (m *taskTimes) spent() (busy, backPressured, idle int64) {
	if m.started == 0 {
		return 0, 0, 0
	}
	var open [3]int64
	var now int64
	for {
		for k := range open {
			open[k] = m.since[k].Load()
		}
		idle, backPressured = m.idle.Load(), m.bp.Load()
		same := true
		for k := range open {
			same = same && m.since[k].Load() == open[k]
		}
		if same {
			now = monoNow()
			break
		}
		goruntime.Gosched() // a wait ended or began meanwhile
	}
	for k, since := range open {
		if since == 0 || since >= now {
			continue
		}
		switch waitKind(k) {
		case waitInput:
			idle += now - since
		case waitOutput:
			backPressured += now - since
		case waitPoll:
			busy -= now - since // not decided yet
		}
	}
	busy += now - m.started - idle - backPressured
	return max(busy, 0), backPressured, idle
}

// wireTimes gives every gate the idle clock of its consumer and every
// channel the backpressure clock of its one producer, so the gate's waits
// are charged to the subtasks that wait.
func (e *execution) wireTimes() {
	for _, t := range e.tasks {
		t.gate.consumer = &t.times
		for _, ed := range t.out.edges {
			for _, tg := range ed.targets {
				tg.gate.chans[tg.channel].producer = &t.times
			}
		}
	}
}

// poll runs the source's Poll, accounted as a wait that is idle when it
// returns no records: a source with nothing to read waits inside Poll.
func (t *subtask) poll(b *runtime.Batch) error {
	start := t.times.begin(waitPoll)
	err := t.src.Poll(b)
	t.times.end(waitPoll, start, len(b.Records) > 0)
	return err
}
