package api

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// JobSpec is a job as the user wrote it (docs/job-spec.md).
type JobSpec struct {
	Name            string          `yaml:"name" json:"name"`
	Parallelism     int             `yaml:"parallelism" json:"parallelism,omitempty"`
	MaxParallelism  int             `yaml:"maxParallelism" json:"maxParallelism,omitempty"`
	Checkpointing   *CheckpointSpec `yaml:"checkpointing" json:"checkpointing,omitempty"`
	RestartStrategy *RestartSpec    `yaml:"restartStrategy" json:"restartStrategy,omitempty"`
	// StateBackend picks where keyed state lives (state.backend.type
	// over the daemon's default; docs/state-backends.md).
	StateBackend *StateBackendSpec `yaml:"stateBackend" json:"stateBackend,omitempty"`
	// WatermarkInterval is how often sources with event time send their
	// watermark downstream (Flink's pipeline.auto-watermark-interval).
	WatermarkInterval *Duration `yaml:"watermarkInterval" json:"watermarkInterval,omitempty"`
	// Chaining runs an operator that reads only its producer, one to one,
	// and keeps no state (filter, map, keyBy, ...) on its producer's
	// goroutine (Flink's operator chaining; docs/chaining.md). Off by
	// default: a chain does in one goroutine what would run on several
	// cores.
	Chaining  bool           `yaml:"chaining" json:"chaining,omitempty"`
	Operators []OperatorSpec `yaml:"operators,required" json:"operators"`
}

// defaultWatermarkInterval is Flink's pipeline.auto-watermark-interval.
const defaultWatermarkInterval = 200 * time.Millisecond

// WatermarkEvery returns the watermark interval of the job.
func (s *JobSpec) WatermarkEvery() time.Duration {
	if s.WatermarkInterval == nil {
		return defaultWatermarkInterval
	}
	return s.WatermarkInterval.D()
}

// OperatorSpec is one operator of a job. Options holds the keys specific to
// its type, decoded by that type.
type OperatorSpec struct {
	UID  string   `yaml:"uid,required" json:"uid"`
	Type string   `yaml:"type,required" json:"type"`
	From []string `yaml:"from" json:"from,omitempty"`
	// FromFields, for a type that takes its inputs from options (see
	// InputDeclarer), names the option of each From entry ("left.from").
	FromFields  []string `yaml:"-" json:"-"`
	Parallelism int      `yaml:"parallelism" json:"parallelism,omitempty"`
	// EventTime (sources only) says where records' timestamps come from and
	// how the source's watermarks follow them.
	EventTime *EventTimeSpec `yaml:"eventTime" json:"eventTime,omitempty"`
	// Schema (sources only) declares the records' JSON fields and their
	// types (schema.go), so expressions downstream are checked at submit.
	Schema map[string]string `yaml:"schema" json:"schema,omitempty"`
	// OnError says what the operator does with a record it cannot
	// process: fail (default), skip or sideOutput (onerror.go).
	OnError string          `yaml:"onError" json:"onError,omitempty"`
	Options map[string]Node `yaml:",remain" json:"-"`
}

// EventTimeSpec is a source's event time (docs/event-time.md).
type EventTimeSpec struct {
	// Timestamp is an expression over the record's fields giving its event
	// time: a number (ms since the epoch) or an RFC 3339 string. Empty: the
	// record's own timestamp (the Kafka or NATS message time).
	Timestamp string `yaml:"timestamp" json:"timestamp,omitempty"`
	// MaxOutOfOrderness bounds how far a split's timestamps may go back:
	// its watermark is its largest timestamp minus this, minus 1 ms.
	MaxOutOfOrderness *Duration `yaml:"maxOutOfOrderness" json:"maxOutOfOrderness,omitempty"`
	// IdleTimeout: a split quiet this long stops holding the watermark back
	// until it produces again (0: never).
	IdleTimeout *Duration `yaml:"idleTimeout" json:"idleTimeout,omitempty"`
	// AdvanceWhenIdle: when every split of a subtask is idle, its watermark
	// follows the wall clock (minus MaxOutOfOrderness) instead of pausing,
	// so the last windows of a quiet stream fire.
	AdvanceWhenIdle bool `yaml:"advanceWhenIdle" json:"advanceWhenIdle,omitempty"`
}

// Bound is MaxOutOfOrderness (0 when unset).
func (e *EventTimeSpec) Bound() time.Duration {
	if e == nil || e.MaxOutOfOrderness == nil {
		return 0
	}
	return e.MaxOutOfOrderness.D()
}

// Idle is IdleTimeout (0 when unset: never idle).
func (e *EventTimeSpec) Idle() time.Duration {
	if e == nil || e.IdleTimeout == nil {
		return 0
	}
	return e.IdleTimeout.D()
}

// Checkpointing modes (Flink's CheckpointingMode).
const (
	ExactlyOnce = "exactly-once"
	AtLeastOnce = "at-least-once"
)

// Externalized checkpoint retention (Flink's ExternalizedCheckpointRetention).
const (
	RetainOnCancellation = "retain-on-cancellation"
	DeleteOnCancellation = "delete-on-cancellation"
)

// CheckpointSpec mirrors Flink's CheckpointConfig. Unset fields (nil, "")
// take the daemon's execution.checkpointing.* defaults.
type CheckpointSpec struct {
	Interval          *Duration `yaml:"interval" json:"interval,omitempty"`
	Mode              string    `yaml:"mode" json:"mode,omitempty"`
	Timeout           *Duration `yaml:"timeout" json:"timeout,omitempty"`
	MinPause          *Duration `yaml:"minPause" json:"minPause,omitempty"`
	MaxConcurrent     *int      `yaml:"maxConcurrent" json:"maxConcurrent,omitempty"`
	TolerableFailures *int      `yaml:"tolerableFailures" json:"tolerableFailures,omitempty"`
	Externalized      string    `yaml:"externalized" json:"externalized,omitempty"`
	Retained          *int      `yaml:"retained" json:"retained,omitempty"`
}

// Restart strategy types, named as in Flink.
const (
	RestartNone             = "none"
	RestartFixedDelay       = "fixed-delay"
	RestartExponentialDelay = "exponential-delay"
	RestartFailureRate      = "failure-rate"
)

// RestartSpec mirrors Flink's restart strategies; which fields apply depends
// on Type (see restartFields).
type RestartSpec struct {
	Type           string    `yaml:"type" json:"type,omitempty"`
	Attempts       *int      `yaml:"attempts" json:"attempts,omitempty"`
	Delay          *Duration `yaml:"delay" json:"delay,omitempty"`
	InitialBackoff *Duration `yaml:"initialBackoff" json:"initialBackoff,omitempty"`
	MaxBackoff     *Duration `yaml:"maxBackoff" json:"maxBackoff,omitempty"`
	Multiplier     *float64  `yaml:"multiplier" json:"multiplier,omitempty"`
	Jitter         *float64  `yaml:"jitter" json:"jitter,omitempty"`
	ResetThreshold *Duration `yaml:"resetThreshold" json:"resetThreshold,omitempty"`
	MaxFailures    *int      `yaml:"maxFailures" json:"maxFailures,omitempty"`
	Interval       *Duration `yaml:"interval" json:"interval,omitempty"`
}

// restartFields lists which optional fields each restart type accepts.
var restartFields = map[string][]string{
	RestartNone:             {},
	RestartFixedDelay:       {"attempts", "delay"},
	RestartExponentialDelay: {"attempts", "initialBackoff", "maxBackoff", "multiplier", "jitter", "resetThreshold"},
	RestartFailureRate:      {"maxFailures", "interval", "delay"},
}

// Fingerprint identifies a spec's text, so metadata can tell whether a
// snapshot came from the same job definition.
func Fingerprint(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:8])
}
