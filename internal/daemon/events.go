package daemon

import (
	"fmt"
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// eventsKept bounds a job's event log (in memory, and in its journal for
// the next daemon: journal.go).
const eventsKept = 256

// eventLog is a ring of a job's latest events, numbered from 1, that grows
// to eventsKept (a short job's few events take little). Not safe for
// concurrent use.
type eventLog struct {
	next    int64 // the Seq of the next event
	head, n int
	ring    []api.JobEvent
}

func (l *eventLog) add(at time.Time, kind, severity, msg string) {
	if l.next == 0 {
		l.next = 1
	}
	ev := api.JobEvent{Seq: l.next, Time: at, Kind: kind, Severity: severity, Message: msg}
	l.next++
	if len(l.ring) < eventsKept {
		l.ring = append(l.ring, ev)
		l.n++
		return
	}
	l.ring[l.head] = ev
	l.head = (l.head + 1) % eventsKept
}

// restore replaces the log with events read back from the journal (the
// oldest first); numbering goes on after the last.
func (l *eventLog) restore(events []api.JobEvent) {
	if len(events) > eventsKept {
		events = events[len(events)-eventsKept:]
	}
	l.ring, l.head, l.n = slices.Clone(events), 0, len(events)
	l.next = 1
	if len(events) > 0 {
		l.next = events[len(events)-1].Seq + 1
	}
}

// all returns the events, the oldest first.
func (l *eventLog) all() []api.JobEvent {
	out, _ := l.after(0, eventsKept)
	return out
}

// after returns the events with Seq > seq (at most limit, the oldest
// first) and the seq to ask for next; seq < 0 means the last limit events.
func (l *eventLog) after(seq int64, limit int) ([]api.JobEvent, int64) {
	out := []api.JobEvent{}
	for k := 0; k < l.n; k++ {
		if ev := l.ring[(l.head+k)%len(l.ring)]; ev.Seq > seq {
			out = append(out, ev)
		}
	}
	if seq < 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	if len(out) > limit {
		out = out[:limit]
	}
	next := max(seq, 0)
	if len(out) > 0 {
		next = out[len(out)-1].Seq
	} else if seq < 0 && l.next > 0 {
		next = l.next - 1
	}
	return out, next
}

// stateEvent describes a job's move to info.State (from prev): with the
// failure that caused it, and what a new attempt restored.
func stateEvent(prev api.JobState, info *api.JobInfo) (severity, msg string) {
	s := info.State
	msg = fmt.Sprintf("%s → %s", prev, s)
	if prev == "" {
		msg = string(s) // the first state this daemon saw
	}
	switch {
	case s == api.StateFailed:
		return "error", msg + ": " + orNone(info.Error) + rootCause(*info)
	case s == api.StateFailing:
		return "error", msg + ": " + orNone(info.Error)
	case s == api.StateRestarting:
		return "warning", msg + fmt.Sprintf(" (restart %d, %s strategy)", info.Restarts+1, info.RestartStrategy.Type)
	case s == api.StateRunning && prev == api.StateRestarting:
		if info.RestoredFrom != "" {
			return "info", msg + " (restored from " + info.RestoredFrom + ")"
		}
		return "info", msg + " (no snapshot to restore: started from the sources' starting positions)"
	case s == api.StateRunning && info.RestoredFrom != "":
		return "info", msg + " (restored from " + info.RestoredFrom + ")"
	}
	return "info", msg
}

// finishedCheckpoint describes a checkpoint entry that is no longer in
// progress, as a chart point and, when it deserves one, an event: failures
// and savepoints (a completed checkpoint every few seconds would bury
// everything else).
func finishedCheckpoint(c api.CheckpointInfo) (p api.CheckpointPoint, kind, severity, msg string) {
	p = api.CheckpointPoint{ID: c.ID, Time: c.TriggerTime.UnixMilli(), Kind: c.Kind, Status: c.Status, DurationMs: c.DurationMs, Size: c.Size}
	switch {
	case c.Status == checkpoint.StatusFailed.String():
		return p, "checkpoint", "warning", fmt.Sprintf("%s %d failed: %s", c.Kind, c.ID, orNone(c.FailureReason))
	case c.Kind == checkpoint.Savepoint.String() || c.Kind == checkpoint.StopSavepoint.String():
		return p, "savepoint", "info", fmt.Sprintf("%s %d completed in %d ms: %s", c.Kind, c.ID, c.DurationMs, c.Path)
	}
	return p, "", "", ""
}
