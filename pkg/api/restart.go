package api

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// RestartConfig is a job's resolved restart strategy. On the wire its
// durations are milliseconds (delayMs, …: durationjson.go).
type RestartConfig struct {
	Type           string
	Attempts       int           // fixed-delay, exponential-delay (0: unlimited for exponential)
	Delay          time.Duration // fixed-delay, failure-rate
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
	Jitter         float64
	ResetThreshold time.Duration
	MaxFailures    int // failure-rate: failures allowed per Interval
	Interval       time.Duration
}

// defaultRestart holds Flink's defaults for each type (Flink 1.19+).
var defaultRestart = map[string]RestartConfig{
	RestartNone:       {Type: RestartNone},
	RestartFixedDelay: {Type: RestartFixedDelay, Attempts: 1, Delay: time.Second},
	RestartExponentialDelay: {Type: RestartExponentialDelay, Attempts: math.MaxInt32,
		InitialBackoff: time.Second, MaxBackoff: time.Minute, Multiplier: 1.5, Jitter: 0.1, ResetThreshold: time.Hour},
	RestartFailureRate: {Type: RestartFailureRate, MaxFailures: 1, Interval: time.Minute, Delay: time.Second},
}

// RestartDefaults are the daemon's restart settings (restart-strategy.*):
// the default type and each type's own options, which apply only when that
// type is in effect (as Flink's restart-strategy.<type>.* keys do).
type RestartDefaults struct {
	Type    string
	Options map[string]*RestartSpec // by type
}

// ResolveRestart layers job over the daemon's defaults over Flink's. When
// neither names a type, the type is none without checkpointing and
// exponential-delay with it, as in Flink 1.19+. d may be nil.
func ResolveRestart(job *RestartSpec, d *RestartDefaults, checkpointing bool) RestartConfig {
	typ := RestartNone
	if checkpointing {
		typ = RestartExponentialDelay
	}
	if d != nil && d.Type != "" {
		typ = d.Type
	}
	if job != nil && job.Type != "" {
		typ = job.Type
	}
	c, ok := defaultRestart[typ]
	if !ok {
		return RestartConfig{Type: typ}
	}
	if d != nil && d.Options[typ] != nil {
		d.Options[typ].applyTo(&c)
	}
	if job != nil && (job.Type == "" || job.Type == typ) {
		job.applyTo(&c)
	}
	return c
}

func (s *RestartSpec) applyTo(c *RestartConfig) {
	setD := func(dst *time.Duration, v *Duration) {
		if v != nil {
			*dst = v.D()
		}
	}
	if s.Attempts != nil {
		c.Attempts = *s.Attempts
	}
	setD(&c.Delay, s.Delay)
	setD(&c.InitialBackoff, s.InitialBackoff)
	setD(&c.MaxBackoff, s.MaxBackoff)
	if s.Multiplier != nil {
		c.Multiplier = *s.Multiplier
	}
	if s.Jitter != nil {
		c.Jitter = *s.Jitter
	}
	setD(&c.ResetThreshold, s.ResetThreshold)
	if s.MaxFailures != nil {
		c.MaxFailures = *s.MaxFailures
	}
	setD(&c.Interval, s.Interval)
}

// setFields names the optional fields set in s.
func (s *RestartSpec) setFields() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("attempts", s.Attempts != nil)
	add("delay", s.Delay != nil)
	add("initialBackoff", s.InitialBackoff != nil)
	add("maxBackoff", s.MaxBackoff != nil)
	add("multiplier", s.Multiplier != nil)
	add("jitter", s.Jitter != nil)
	add("resetThreshold", s.ResetThreshold != nil)
	add("maxFailures", s.MaxFailures != nil)
	add("interval", s.Interval != nil)
	return out
}

// maxBackoffMultiplier bounds exponential-delay's multiplier: past a few
// the delay jumps from initialBackoff to maxBackoff at once anyway.
const maxBackoffMultiplier = 1000

// ValidateRestartSpec records every problem of s (at path) on d.
func ValidateRestartSpec(d *Decoder, path string, s *RestartSpec) {
	f := func(name string) string { return joinPath(path, name) }
	if t, ok := RestartType(s.Type); ok {
		s.Type = t
	}
	allowed, known := restartFields[s.Type]
	switch {
	case s.Type == "":
		if len(s.setFields()) > 0 {
			d.ErrorAt(f("type"), "missing: set type to one of %s", strings.Join(restartTypes(), ", "))
		}
	case !known:
		d.ErrorAt(f("type"), "unknown restart strategy %q; use one of %s", s.Type, strings.Join(restartTypes(), ", "))
	default:
		for _, name := range s.setFields() {
			if !contains(allowed, name) {
				d.ErrorAt(f(name), "does not apply to restart strategy %s (it takes %s)", s.Type, orNothing(allowed))
			}
		}
	}
	if s.Attempts != nil && *s.Attempts < 0 {
		d.ErrorAt(f("attempts"), "must be 0 or more, got %d", *s.Attempts)
	}
	// Negated so NaN (a config file's "NaN") fails too.
	if s.Multiplier != nil && !(*s.Multiplier >= 1 && *s.Multiplier <= maxBackoffMultiplier) {
		d.ErrorAt(f("multiplier"), "must be between 1 and %g, got %g", float64(maxBackoffMultiplier), *s.Multiplier)
	}
	if s.Jitter != nil && !(*s.Jitter >= 0 && *s.Jitter <= 1) {
		d.ErrorAt(f("jitter"), "must be between 0 and 1, got %g", *s.Jitter)
	}
	if s.MaxFailures != nil && *s.MaxFailures < 1 {
		d.ErrorAt(f("maxFailures"), "must be at least 1, got %d", *s.MaxFailures)
	}
	if s.Interval != nil && s.Interval.D() <= 0 {
		d.ErrorAt(f("interval"), "must be positive, got %s", s.Interval)
	}
	if s.InitialBackoff != nil && s.MaxBackoff != nil && s.MaxBackoff.D() < s.InitialBackoff.D() {
		d.ErrorAt(f("maxBackoff"), "maxBackoff %s is below initialBackoff %s", s.MaxBackoff, s.InitialBackoff)
	}
}

func restartTypes() []string {
	return []string{RestartNone, RestartFixedDelay, RestartExponentialDelay, RestartFailureRate}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orNothing(list []string) string {
	if len(list) == 0 {
		return "no options"
	}
	return fmt.Sprint(strings.Join(list, ", "))
}
