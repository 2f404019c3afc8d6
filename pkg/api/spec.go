package api

import (
	"crypto/sha256"
	"encoding/hex"
)

// JobSpec is a job as the user wrote it (DESIGN.md section 8).
type JobSpec struct {
	Name            string          `yaml:"name" json:"name"`
	Parallelism     int             `yaml:"parallelism" json:"parallelism,omitempty"`
	MaxParallelism  int             `yaml:"maxParallelism" json:"maxParallelism,omitempty"`
	Checkpointing   *CheckpointSpec `yaml:"checkpointing" json:"checkpointing,omitempty"`
	RestartStrategy *RestartSpec    `yaml:"restartStrategy" json:"restartStrategy,omitempty"`
	Operators       []OperatorSpec  `yaml:"operators,required" json:"operators"`
}

// OperatorSpec is one operator of a job. Options holds the keys specific to
// its type, decoded by that type.
type OperatorSpec struct {
	UID         string          `yaml:"uid,required" json:"uid"`
	Type        string          `yaml:"type,required" json:"type"`
	From        []string        `yaml:"from" json:"from,omitempty"`
	Parallelism int             `yaml:"parallelism" json:"parallelism,omitempty"`
	Options     map[string]Node `yaml:",remain" json:"-"`
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
