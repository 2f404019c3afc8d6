package api

// JobHistory is GET /v1/jobs/{id}/history?since=MS: what the daemon
// sampled of a job once a second over the last SpanMs (15 minutes), oldest
// first, after since (ms since the epoch; 0 or absent: all it keeps). The
// series of one sample share an index with Times.
type JobHistory struct {
	StepMs int64 `json:"stepMs"`
	SpanMs int64 `json:"spanMs"`
	// Times are the samples' times, ms since the epoch.
	Times []int64 `json:"times"`
	// Records entering the job at its sources and leaving it at its sinks,
	// per second (as in the overview).
	RecordsInPerSec  []float64         `json:"recordsInPerSec"`
	RecordsOutPerSec []float64         `json:"recordsOutPerSec"`
	Operators        []OperatorHistory `json:"operators"`
	// Checkpoints are the checkpoints and savepoints that completed or
	// failed after since, oldest first.
	Checkpoints []CheckpointPoint `json:"checkpoints"`
}

// OperatorHistory is one operator's series, as OperatorInfo has them.
type OperatorHistory struct {
	UID                          string    `json:"uid"`
	RecordsInPerSec              []float64 `json:"recordsInPerSec"`
	RecordsOutPerSec             []float64 `json:"recordsOutPerSec"`
	BusyTimeMsPerSecond          []int64   `json:"busyTimeMsPerSecond"`
	BackPressuredTimeMsPerSecond []int64   `json:"backPressuredTimeMsPerSecond"`
	IdleTimeMsPerSecond          []int64   `json:"idleTimeMsPerSecond"`
	// WatermarkLagMs is present when the operator has event time; a null
	// point is a sample before its first watermark.
	WatermarkLagMs []*int64 `json:"watermarkLagMs,omitempty"`
}

// CheckpointPoint is one finished checkpoint of the history chart.
type CheckpointPoint struct {
	ID int64 `json:"id"`
	// Time is when it was triggered, ms since the epoch.
	Time       int64  `json:"time"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	DurationMs int64  `json:"durationMs"`
	Size       int64  `json:"size"`
}
