package api

import "time"

// JobExceptions is GET /v1/jobs/{id}/exceptions, shaped after Flink's
// /jobs/:jobid/exceptions exceptionHistory: the job's last failures, the
// newest first.
type JobExceptions struct {
	Entries []JobException `json:"entries"`
	// Truncated: older failures were dropped (the daemon keeps the last
	// 16, as Flink's web.exception-history-size does by default).
	Truncated bool `json:"truncated"`
}

// JobException is one failure of a job's attempt.
type JobException struct {
	// Timestamp is when it happened, in ms since the epoch (Flink's
	// field); Time is the same instant.
	Timestamp int64     `json:"timestamp"`
	Time      time.Time `json:"time"`
	// Exception is the failure as the job reported it (the operator and
	// subtask are named in it when one failed).
	Exception string `json:"exception"`
	// Attempt is the attempt that failed: the restarts before it.
	Attempt int `json:"attempt"`
}
