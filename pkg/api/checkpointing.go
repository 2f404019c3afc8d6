package api

import "time"

// CheckpointConfig is a job's resolved checkpoint settings: its spec over
// the daemon's defaults over Flink's defaults. On the wire its durations
// are milliseconds (intervalMs, …: durationjson.go).
type CheckpointConfig struct {
	Interval          time.Duration // 0: checkpointing off
	Mode              string
	Timeout           time.Duration
	MinPause          time.Duration
	MaxConcurrent     int
	TolerableFailures int
	Externalized      string
	Retained          int
}

// Enabled reports whether periodic checkpoints are taken.
func (c CheckpointConfig) Enabled() bool { return c.Interval > 0 }

// Flink's CheckpointConfig defaults.
var defaultCheckpointConfig = CheckpointConfig{
	Mode:          ExactlyOnce,
	Timeout:       10 * time.Minute,
	MaxConcurrent: 1,
	Externalized:  DeleteOnCancellation,
	Retained:      1,
}

// MinCheckpointInterval is the shortest interval accepted (Flink's minimum).
const MinCheckpointInterval = 10 * time.Millisecond

// ResolveCheckpointing layers job over daemon defaults over Flink's defaults.
// Either may be nil.
func ResolveCheckpointing(job, defaults *CheckpointSpec) CheckpointConfig {
	c := defaultCheckpointConfig
	for _, s := range []*CheckpointSpec{defaults, job} {
		if s == nil {
			continue
		}
		if s.Interval != nil {
			c.Interval = s.Interval.D()
		}
		if s.Mode != "" {
			c.Mode = s.Mode
		}
		if s.Timeout != nil {
			c.Timeout = s.Timeout.D()
		}
		if s.MinPause != nil {
			c.MinPause = s.MinPause.D()
		}
		if s.MaxConcurrent != nil {
			c.MaxConcurrent = *s.MaxConcurrent
		}
		if s.TolerableFailures != nil {
			c.TolerableFailures = *s.TolerableFailures
		}
		if s.Externalized != "" {
			c.Externalized = s.Externalized
		}
		if s.Retained != nil {
			c.Retained = *s.Retained
		}
	}
	return c
}

// ValidateCheckpointSpec records every problem of s (at path) on d.
func ValidateCheckpointSpec(d *Decoder, path string, s *CheckpointSpec) {
	f := func(name string) string { return joinPath(path, name) }
	normalizeEnum(&s.Mode, ExactlyOnce, AtLeastOnce)
	normalizeEnum(&s.Externalized, RetainOnCancellation, DeleteOnCancellation)
	if s.Interval != nil && s.Interval.D() < MinCheckpointInterval {
		d.ErrorAt(f("interval"), "must be at least %s, got %s; omit it to turn checkpointing off", MinCheckpointInterval, s.Interval)
	}
	switch s.Mode {
	case "", ExactlyOnce, AtLeastOnce:
	default:
		d.ErrorAt(f("mode"), "must be %s or %s, got %q", ExactlyOnce, AtLeastOnce, s.Mode)
	}
	if s.Timeout != nil && s.Timeout.D() < MinCheckpointInterval {
		d.ErrorAt(f("timeout"), "must be at least %s, got %s", MinCheckpointInterval, s.Timeout)
	}
	if s.MaxConcurrent != nil && *s.MaxConcurrent < 1 {
		d.ErrorAt(f("maxConcurrent"), "must be at least 1, got %d", *s.MaxConcurrent)
	}
	if s.TolerableFailures != nil && *s.TolerableFailures < 0 {
		d.ErrorAt(f("tolerableFailures"), "must be 0 or more, got %d", *s.TolerableFailures)
	}
	switch s.Externalized {
	case "", RetainOnCancellation, DeleteOnCancellation:
	default:
		d.ErrorAt(f("externalized"), "must be %s or %s, got %q", RetainOnCancellation, DeleteOnCancellation, s.Externalized)
	}
	if s.Retained != nil && *s.Retained < 1 {
		d.ErrorAt(f("retained"), "must be at least 1, got %d", *s.Retained)
	}
	if s.MinPause != nil && s.MinPause.D() > 0 && s.MaxConcurrent != nil && *s.MaxConcurrent > 1 {
		d.ErrorAt(f("minPause"), "minPause %s with maxConcurrent %d is inconsistent: a pause between checkpoints allows only one at a time; set maxConcurrent: 1 or minPause: 0", s.MinPause, *s.MaxConcurrent)
	}
}
