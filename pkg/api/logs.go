package api

import "time"

// JobLogs is GET /v1/jobs/{id}/logs: the tail of the job's print output
// (its job.out) and its recent events. With ?output=POS&events=SEQ (the
// OutputNext and EventsNext of an earlier answer) it holds only what came
// after them, which is how `flinkgo logs -f` follows; ?lines=N bounds the
// tail (default 100, at most 1000).
type JobLogs struct {
	State JobState `json:"state"`
	// Output holds complete lines, each cut at 4 KiB.
	Output     []string `json:"output"`
	OutputNext int64    `json:"outputNext"`
	// OutputSkipped counts bytes that were rotated away
	// (daemon.job-out.max-size) before they could be read.
	OutputSkipped int64      `json:"outputSkipped,omitempty"`
	Events        []JobEvent `json:"events"`
	EventsNext    int64      `json:"eventsNext"`
}

// JobEvent is one thing that happened to a job: a state change (with the
// failure that caused it), a restart and what it restored, a failed
// checkpoint, a completed savepoint, a problem an operator reported. The
// daemon keeps the last 256 per job, and on disk once the job ended here
// (docs/dashboard.md, "Events and exceptions across a restart").
type JobEvent struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Kind is state, checkpoint, savepoint, problem, or daemon (the
	// daemon restarted: the events before are from the previous one).
	Kind string `json:"kind"`
	// Severity is info, warning or error.
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// LogsLinesMax is the most output lines (and events) one answer of GET
// /v1/jobs/{id}/logs holds; a larger ?lines= is cut to it.
const LogsLinesMax = 1000

// LogsQuery is what GET /v1/jobs/{id}/logs asks for: the tail of at most
// Lines lines and events (0: 100), or, with From, what came after an
// earlier answer.
type LogsQuery struct {
	Lines int
	From  *LogsPosition
}

// LogsPosition is where an answer ended (its OutputNext and EventsNext).
type LogsPosition struct {
	Output int64
	Events int64
}

// Next is the position after l, to follow.
func (l *JobLogs) Next() *LogsPosition {
	return &LogsPosition{Output: l.OutputNext, Events: l.EventsNext}
}
