package api

// SubtaskInfo is one parallel instance of an operator in the running
// attempt: its figures start from zero at each restart.
type SubtaskInfo struct {
	Index      int   `json:"index"`
	RecordsIn  int64 `json:"recordsIn"`
	RecordsOut int64 `json:"recordsOut"`
	// Rates over the daemon's last sampling second.
	RecordsInPerSec  float64 `json:"recordsInPerSec"`
	RecordsOutPerSec float64 `json:"recordsOutPerSec"`
	// Time since the subtask started, split as Flink does
	// (accumulateBusyTimeMs, accumulateBackPressuredTimeMs,
	// accumulateIdleTimeMs): backpressured while it waited for room in a
	// full output channel, idle while it waited for input (a source: a
	// poll that found nothing), busy the rest.
	AccumulatedBusyTimeMs          int64 `json:"accumulateBusyTimeMs"`
	AccumulatedBackPressuredTimeMs int64 `json:"accumulateBackPressuredTimeMs"`
	AccumulatedIdleTimeMs          int64 `json:"accumulateIdleTimeMs"`
	// The same over the daemon's last sampling second, in ms per second
	// (they add up to about 1000).
	BusyTimeMsPerSecond          int64 `json:"busyTimeMsPerSecond"`
	BackPressuredTimeMsPerSecond int64 `json:"backPressuredTimeMsPerSecond"`
	IdleTimeMsPerSecond          int64 `json:"idleTimeMsPerSecond"`
	// Event time, once the subtask has seen a watermark (see OperatorInfo).
	InputWatermark  *int64 `json:"inputWatermark,omitempty"`
	OutputWatermark *int64 `json:"outputWatermark,omitempty"`
	WatermarkLagMs  *int64 `json:"watermarkLagMs,omitempty"`
}
