package daemon

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// jobLive is what the daemon keeps in memory about a job while it watches
// it: the last sample's counters and the rates since the one before, the
// history for the dashboard's charts, and the event log. Its own lock, not
// the entry's (held across registry writes), guards it.
type jobLive struct {
	mu     sync.Mutex
	prev   *counters
	rates  *rates
	hist   *history
	events eventLog
	exc    exceptionLog
	state  api.JobState    // the last state logged
	cpDone map[int64]bool  // checkpoints recorded as finished
	shown  map[string]bool // operator problems logged and still present
	ended  bool            // sampled after the job ended: nothing more moves
	// histRead is when a page last read the history; histAbsent: the job
	// ended and its history is neither in memory nor on disk (never look
	// again). See historyfile.go.
	histRead   time.Time
	histAbsent bool
}

// apply fills info's rates and shares of time from the last sample.
func (l *jobLive) apply(info *api.JobInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rates.apply(info)
}

// observeState logs a change of the job's state (the job's OnUpdate).
func (l *jobLive) observeState(info *api.JobInfo, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.exc.note(info)
	if info.State == l.state {
		return
	}
	sev, msg := stateEvent(l.state, info)
	l.state = info.State
	l.events.add(at, "state", sev, msg)
}

// watching reports whether the job needs more samples: it has not been
// sampled since it ended.
func (l *jobLive) watching() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.ended
}

// sample records the job's figures at at: info is its live info, cps its
// checkpoint history. It reports whether this was the last sample (the
// job has ended).
func (l *jobLive) sample(at time.Time, info api.JobInfo, cps api.CheckpointsInfo) (last bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return false
	}
	c := countersOf(&info, at)
	if l.prev != nil {
		r := ratesBetween(*l.prev, c)
		l.rates = &r
	}
	l.prev = &c
	l.rates.apply(&info)
	if l.hist == nil {
		l.hist = newHistory(&info)
	}
	l.hist.add(at, &info)
	l.exc.note(&info)
	l.checkpoints(cps, at)
	l.problems(&info, at)
	if !info.State.Active() {
		l.ended, l.prev, l.rates = true, nil, nil
		l.hist.compact()
	}
	return l.ended
}

// checkpoints records the checkpoints that finished since the last sample.
func (l *jobLive) checkpoints(cps api.CheckpointsInfo, at time.Time) {
	if l.cpDone == nil {
		l.cpDone = map[int64]bool{}
	}
	history := cps.History // newest first
	seen := make(map[int64]bool, len(history))
	for i := len(history) - 1; i >= 0; i-- {
		c := history[i]
		seen[c.ID] = true
		if c.Status == checkpoint.StatusInProgress.String() || l.cpDone[c.ID] {
			continue
		}
		l.cpDone[c.ID] = true
		p, kind, sev, msg := finishedCheckpoint(c)
		l.hist.addCheckpoint(p)
		if kind != "" {
			l.events.add(at, kind, sev, msg)
		}
	}
	for id := range l.cpDone {
		if !seen[id] {
			delete(l.cpDone, id) // out of the job's history: never reported again
		}
	}
}

// problems logs the operators' problems that appeared since the last
// sample (each once while it lasts).
func (l *jobLive) problems(info *api.JobInfo, at time.Time) {
	now := map[string]bool{}
	var fresh []string
	for _, op := range info.Operators {
		for _, p := range op.Problems {
			msg := "operator " + op.UID + ": " + p
			now[msg] = true
			if !l.shown[msg] {
				fresh = append(fresh, msg)
			}
		}
	}
	sort.Strings(fresh)
	for _, msg := range fresh {
		l.events.add(at, "problem", "warning", msg)
	}
	l.shown = now
}

// historySince returns the job's history after since (ms since the epoch).
func (l *jobLive) historySince(since int64, now time.Time) api.JobHistory {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.histRead = now
	if l.hist == nil {
		return (&history{}).since(since)
	}
	return l.hist.since(since)
}

// sparkline is the overview's sparkline of the job.
func (l *jobLive) sparkline() []float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hist == nil {
		return []float64{}
	}
	return l.hist.sparkline()
}

// eventsAfter returns the events after seq (seq < 0: the last limit).
func (l *jobLive) eventsAfter(seq int64, limit int) ([]api.JobEvent, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events.after(seq, limit)
}

// expire drops the history of an ended job from memory once its last
// sample is older than the span and no page has read it for historyIdle:
// its page reads it back from the job's directory (historyfile.go).
func (l *jobLive) expire(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended && l.hist != nil && now.Sub(l.hist.newest()) > historySpan && now.Sub(l.histRead) > historyIdle {
		l.hist, l.cpDone, l.shown = nil, nil, nil
	}
}

// savedHistory is the history to write for a job that ended (false: none).
func (l *jobLive) savedHistory() (savedHistory, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended || l.hist == nil {
		return savedHistory{}, false
	}
	return l.hist.save(), true
}

// wantsHistory reports whether the history of a job that does not run
// (any more) should be read from disk: it is not in memory, and not known
// to be absent.
func (l *jobLive) wantsHistory() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hist == nil && !l.histAbsent
}

// loaded takes the history read from disk for a job that does not run (nil:
// there is none); nothing more is sampled of it.
func (l *jobLive) loaded(h *history) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	if h == nil {
		l.histAbsent = true
		return
	}
	if l.hist == nil {
		l.hist = h
	}
}

// exceptions returns the job's exception history, the newest first.
func (l *jobLive) exceptions() api.JobExceptions {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.exc.newestFirst()
}

// journal returns what a daemon restart keeps of the job (journal.go).
func (l *jobLive) journal() journal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return journal{Events: l.events.all(), Exceptions: slices.Clone(l.exc.entries), ExceptionsTruncated: l.exc.truncated}
}

// restore takes back what an earlier daemon kept of the job.
func (l *jobLive) restore(j journal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events.restore(j.Events)
	l.exc.restore(j.Exceptions, j.ExceptionsTruncated)
}

// note adds an event of the daemon's own.
func (l *jobLive) note(at time.Time, kind, severity, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events.add(at, kind, severity, msg)
}

// noteFailure records info's last failure in the exception history, if new.
func (l *jobLive) noteFailure(info *api.JobInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.exc.note(info)
}
