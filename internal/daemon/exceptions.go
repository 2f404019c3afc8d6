package daemon

import (
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// exceptionsKept bounds a job's exception history (Flink's
// web.exception-history-size defaults to 16).
const exceptionsKept = 16

// exceptionLog is a job's last failures, the oldest first. Not safe for
// concurrent use.
type exceptionLog struct {
	entries   []api.JobException
	truncated bool      // older ones were dropped
	last      time.Time // the time of the newest failure recorded
}

// note records the job's last failure when it is one not recorded yet:
// info.ErrorTime moves with every failure, and a job is seen several
// times per failure (its updates, the sampler).
func (l *exceptionLog) note(info *api.JobInfo) {
	if info.Error == "" || info.ErrorTime == nil || !info.ErrorTime.After(l.last) {
		return
	}
	at := *info.ErrorTime
	l.last = at
	attempt := info.Restarts
	if info.State == api.StateRunning {
		// Seen only once the next attempt ran: the failed one is before it.
		attempt = max(attempt-1, 0)
	}
	l.entries = append(l.entries, api.JobException{Timestamp: at.UnixMilli(), Time: at, Exception: info.Error, Attempt: attempt})
	if n := len(l.entries) - exceptionsKept; n > 0 {
		l.entries = slices.Delete(l.entries, 0, n)
		l.truncated = true
	}
}

// newestFirst returns the history as the API answers it.
func (l *exceptionLog) newestFirst() api.JobExceptions {
	out := api.JobExceptions{Entries: make([]api.JobException, 0, len(l.entries)), Truncated: l.truncated}
	for i := len(l.entries) - 1; i >= 0; i-- {
		out.Entries = append(out.Entries, l.entries[i])
	}
	return out
}

// restore replaces the history with one read back from the journal.
func (l *exceptionLog) restore(entries []api.JobException, truncated bool) {
	if len(entries) > exceptionsKept {
		entries, truncated = entries[len(entries)-exceptionsKept:], true
	}
	l.entries, l.truncated = slices.Clone(entries), truncated
	if len(entries) > 0 {
		l.last = entries[len(entries)-1].Time
	}
}
