package api

import (
	"encoding/json"
	"time"
)

// The control API and -o json give every duration as whole milliseconds
// in a field whose name ends in Ms (intervalMs, durationMs, uptimeMs), one
// convention everywhere. CheckpointConfig and RestartConfig hold
// time.Durations for the engine; these methods put them on the wire so.
// Reading also accepts the nanosecond fields of registries written before
// (job.json of a daemon before this change: "interval": 2000000000).

type checkpointConfigJSON struct {
	IntervalMs        int64  `json:"intervalMs"` // 0: checkpointing off
	Mode              string `json:"mode"`
	TimeoutMs         int64  `json:"timeoutMs"`
	MinPauseMs        int64  `json:"minPauseMs"`
	MaxConcurrent     int    `json:"maxConcurrent"`
	TolerableFailures int    `json:"tolerableFailures"`
	Externalized      string `json:"externalized"`
	Retained          int    `json:"retained"`
	// Before the Ms fields: nanoseconds.
	LegacyInterval *int64 `json:"interval,omitempty"`
	LegacyTimeout  *int64 `json:"timeout,omitempty"`
	LegacyMinPause *int64 `json:"minPause,omitempty"`
}

// MarshalJSON writes the durations in milliseconds (intervalMs, …).
func (c CheckpointConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(checkpointConfigJSON{IntervalMs: c.Interval.Milliseconds(), Mode: c.Mode,
		TimeoutMs: c.Timeout.Milliseconds(), MinPauseMs: c.MinPause.Milliseconds(), MaxConcurrent: c.MaxConcurrent,
		TolerableFailures: c.TolerableFailures, Externalized: c.Externalized, Retained: c.Retained})
}

// UnmarshalJSON reads what MarshalJSON writes, or the older nanoseconds.
func (c *CheckpointConfig) UnmarshalJSON(b []byte) error {
	var w checkpointConfigJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = CheckpointConfig{Interval: fromWire(w.IntervalMs, w.LegacyInterval), Mode: w.Mode,
		Timeout: fromWire(w.TimeoutMs, w.LegacyTimeout), MinPause: fromWire(w.MinPauseMs, w.LegacyMinPause),
		MaxConcurrent: w.MaxConcurrent, TolerableFailures: w.TolerableFailures, Externalized: w.Externalized, Retained: w.Retained}
	return nil
}

type restartConfigJSON struct {
	Type             string  `json:"type"`
	Attempts         int     `json:"attempts,omitempty"`
	DelayMs          int64   `json:"delayMs,omitempty"`
	InitialBackoffMs int64   `json:"initialBackoffMs,omitempty"`
	MaxBackoffMs     int64   `json:"maxBackoffMs,omitempty"`
	Multiplier       float64 `json:"multiplier,omitempty"`
	Jitter           float64 `json:"jitter,omitempty"`
	ResetThresholdMs int64   `json:"resetThresholdMs,omitempty"`
	MaxFailures      int     `json:"maxFailures,omitempty"`
	IntervalMs       int64   `json:"intervalMs,omitempty"`
	// Before the Ms fields: nanoseconds.
	LegacyDelay          *int64 `json:"delay,omitempty"`
	LegacyInitialBackoff *int64 `json:"initialBackoff,omitempty"`
	LegacyMaxBackoff     *int64 `json:"maxBackoff,omitempty"`
	LegacyResetThreshold *int64 `json:"resetThreshold,omitempty"`
	LegacyInterval       *int64 `json:"interval,omitempty"`
}

// MarshalJSON writes the durations in milliseconds (delayMs, …).
func (c RestartConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(restartConfigJSON{Type: c.Type, Attempts: c.Attempts, DelayMs: c.Delay.Milliseconds(),
		InitialBackoffMs: c.InitialBackoff.Milliseconds(), MaxBackoffMs: c.MaxBackoff.Milliseconds(),
		Multiplier: c.Multiplier, Jitter: c.Jitter, ResetThresholdMs: c.ResetThreshold.Milliseconds(),
		MaxFailures: c.MaxFailures, IntervalMs: c.Interval.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes, or the older nanoseconds.
func (c *RestartConfig) UnmarshalJSON(b []byte) error {
	var w restartConfigJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = RestartConfig{Type: w.Type, Attempts: w.Attempts, Delay: fromWire(w.DelayMs, w.LegacyDelay),
		InitialBackoff: fromWire(w.InitialBackoffMs, w.LegacyInitialBackoff), MaxBackoff: fromWire(w.MaxBackoffMs, w.LegacyMaxBackoff),
		Multiplier: w.Multiplier, Jitter: w.Jitter, ResetThreshold: fromWire(w.ResetThresholdMs, w.LegacyResetThreshold),
		MaxFailures: w.MaxFailures, Interval: fromWire(w.IntervalMs, w.LegacyInterval)}
	return nil
}

// fromWire is ms, or the legacy nanoseconds when only they were written.
func fromWire(ms int64, legacyNs *int64) time.Duration {
	if ms == 0 && legacyNs != nil {
		return time.Duration(*legacyNs)
	}
	return time.Duration(ms) * time.Millisecond
}
