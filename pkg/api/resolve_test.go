package api

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func dur(d time.Duration) *Duration { x := Duration(d); return &x }

// flinkCheckpointDefaults is Flink's CheckpointConfig with nothing set.
var flinkCheckpointDefaults = CheckpointConfig{
	Interval:          0,
	Mode:              ExactlyOnce,
	Timeout:           10 * time.Minute,
	MinPause:          0,
	MaxConcurrent:     1,
	TolerableFailures: 0,
	Externalized:      DeleteOnCancellation,
	Retained:          1,
}

func TestResolveCheckpointing(t *testing.T) {
	daemon := &CheckpointSpec{Interval: dur(30 * time.Second), Timeout: dur(time.Minute), MinPause: dur(5 * time.Second),
		Retained: ptr(3), Externalized: RetainOnCancellation}
	with := func(f func(*CheckpointConfig)) CheckpointConfig {
		c := flinkCheckpointDefaults
		f(&c)
		return c
	}
	daemonResolved := with(func(c *CheckpointConfig) {
		c.Interval, c.Timeout, c.MinPause, c.Retained, c.Externalized = 30*time.Second, time.Minute, 5*time.Second, 3, RetainOnCancellation
	})
	for _, tc := range []struct {
		name        string
		job, daemon *CheckpointSpec
		want        CheckpointConfig
	}{
		{"nothing set: Flink's defaults, checkpointing off", nil, nil, flinkCheckpointDefaults},
		{"empty specs are nothing set", &CheckpointSpec{}, &CheckpointSpec{}, flinkCheckpointDefaults},
		{"daemon defaults over Flink's", nil, daemon, daemonResolved},
		{"job over Flink's", &CheckpointSpec{Interval: dur(time.Second), Mode: AtLeastOnce}, nil,
			with(func(c *CheckpointConfig) { c.Interval, c.Mode = time.Second, AtLeastOnce })},
		{"job over daemon, field by field", &CheckpointSpec{Interval: dur(10 * time.Second), Mode: AtLeastOnce, MaxConcurrent: ptr(2)}, daemon,
			with(func(c *CheckpointConfig) {
				*c = daemonResolved
				c.Interval, c.Mode, c.MaxConcurrent = 10*time.Second, AtLeastOnce, 2
			})},
		{"an explicit zero in the job wins over the daemon", &CheckpointSpec{MinPause: dur(0), TolerableFailures: ptr(0)},
			&CheckpointSpec{MinPause: dur(time.Second), TolerableFailures: ptr(5)},
			with(func(c *CheckpointConfig) { c.MinPause, c.TolerableFailures = 0, 0 })},
		{"every field from the job", &CheckpointSpec{Interval: dur(time.Second), Mode: AtLeastOnce, Timeout: dur(2 * time.Second),
			MinPause: dur(3 * time.Second), MaxConcurrent: ptr(4), TolerableFailures: ptr(5), Externalized: RetainOnCancellation, Retained: ptr(6)}, daemon,
			CheckpointConfig{Interval: time.Second, Mode: AtLeastOnce, Timeout: 2 * time.Second, MinPause: 3 * time.Second,
				MaxConcurrent: 4, TolerableFailures: 5, Externalized: RetainOnCancellation, Retained: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ResolveCheckpointing(tc.job, tc.daemon)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want.Interval > 0, got.Enabled())
		})
	}
	// Resolving does not change its inputs.
	assert.Equal(t, 3, *daemon.Retained)
	assert.Nil(t, daemon.MaxConcurrent)
}

func TestResolveRestart(t *testing.T) {
	flinkExp := RestartConfig{Type: RestartExponentialDelay, Attempts: math.MaxInt32, InitialBackoff: time.Second,
		MaxBackoff: time.Minute, Multiplier: 1.5, Jitter: 0.1, ResetThreshold: time.Hour}
	flinkFixed := RestartConfig{Type: RestartFixedDelay, Attempts: 1, Delay: time.Second}
	flinkRate := RestartConfig{Type: RestartFailureRate, MaxFailures: 1, Interval: time.Minute, Delay: time.Second}
	// The daemon tunes each type (restart-strategy.<type>.*); its default
	// type is fixed-delay.
	daemon := &RestartDefaults{Type: RestartFixedDelay, Options: map[string]*RestartSpec{
		RestartFixedDelay:       {Attempts: ptr(3), Delay: dur(time.Minute)},
		RestartFailureRate:      {Interval: dur(time.Hour)},
		RestartExponentialDelay: {InitialBackoff: dur(2 * time.Second), Jitter: ptr(0.0)},
	}}
	tunedOnly := &RestartDefaults{Options: daemon.Options} // no default type
	with := func(c RestartConfig, f func(*RestartConfig)) RestartConfig { f(&c); return c }
	for _, tc := range []struct {
		name          string
		job           *RestartSpec
		daemon        *RestartDefaults
		checkpointing bool
		want          RestartConfig
	}{
		{"default without checkpointing: none", nil, nil, false, RestartConfig{Type: RestartNone}},
		{"default with checkpointing: exponential-delay", nil, nil, true, flinkExp},
		{"empty settings are nothing set", &RestartSpec{}, &RestartDefaults{}, true, flinkExp},
		{"daemon type and its options", nil, daemon, true,
			RestartConfig{Type: RestartFixedDelay, Attempts: 3, Delay: time.Minute}},
		{"daemon type applies without checkpointing too", nil, &RestartDefaults{Type: RestartFailureRate}, false, flinkRate},
		{"daemon options of the type in effect", nil, tunedOnly, true,
			with(flinkExp, func(c *RestartConfig) { c.InitialBackoff, c.Jitter = 2*time.Second, 0 })},
		{"daemon options of another type do not apply", nil, tunedOnly, false, RestartConfig{Type: RestartNone}},
		{"job over daemon options of the same type, field by field",
			&RestartSpec{Type: RestartFixedDelay, Delay: dur(5 * time.Second)}, daemon, true,
			RestartConfig{Type: RestartFixedDelay, Attempts: 3, Delay: 5 * time.Second}},
		{"job without type takes the daemon's type and options",
			&RestartSpec{Delay: dur(5 * time.Second)}, daemon, false,
			RestartConfig{Type: RestartFixedDelay, Attempts: 3, Delay: 5 * time.Second}},
		{"job of another type: that type's daemon options, not the default type's",
			&RestartSpec{Type: RestartFailureRate, MaxFailures: ptr(5)}, daemon, true,
			with(flinkRate, func(c *RestartConfig) { c.MaxFailures, c.Interval = 5, time.Hour })},
		{"job type none over a daemon type", &RestartSpec{Type: RestartNone}, daemon, true, RestartConfig{Type: RestartNone}},
		{"job type with checkpointing off", &RestartSpec{Type: RestartFixedDelay}, nil, false, flinkFixed},
		{"exponential-delay with every field",
			&RestartSpec{Type: RestartExponentialDelay, Attempts: ptr(0), InitialBackoff: dur(time.Millisecond), MaxBackoff: dur(time.Second),
				Multiplier: ptr(3.0), Jitter: ptr(0.5), ResetThreshold: dur(time.Minute)}, daemon, false,
			RestartConfig{Type: RestartExponentialDelay, Attempts: 0, InitialBackoff: time.Millisecond, MaxBackoff: time.Second,
				Multiplier: 3, Jitter: 0.5, ResetThreshold: time.Minute}},
		{"failure-rate with every field",
			&RestartSpec{Type: RestartFailureRate, MaxFailures: ptr(2), Interval: dur(time.Hour), Delay: dur(0)}, nil, false,
			RestartConfig{Type: RestartFailureRate, MaxFailures: 2, Interval: time.Hour, Delay: 0}},
		{"unknown type resolves to itself (validation reports it)", &RestartSpec{Type: "bogus"}, daemon, true, RestartConfig{Type: "bogus"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ResolveRestart(tc.job, tc.daemon, tc.checkpointing))
		})
	}
	assert.Equal(t, 3, *daemon.Options[RestartFixedDelay].Attempts, "resolving changes no input")
}

// TestResolveRestartDefaultsAreFresh: resolving must not hand out (and let
// callers change) the shared table of Flink defaults.
func TestResolveRestartDefaultsAreFresh(t *testing.T) {
	c := ResolveRestart(&RestartSpec{Type: RestartFixedDelay, Attempts: ptr(9)}, nil, false)
	assert.Equal(t, 9, c.Attempts)
	assert.Equal(t, 1, ResolveRestart(&RestartSpec{Type: RestartFixedDelay}, nil, false).Attempts)
}

// TestValidateRestartSpecFields: each type accepts exactly its own options.
func TestValidateRestartSpecFields(t *testing.T) {
	all := &RestartSpec{Attempts: ptr(1), Delay: dur(time.Second), InitialBackoff: dur(time.Second), MaxBackoff: dur(time.Minute),
		Multiplier: ptr(2.0), Jitter: ptr(0.1), ResetThreshold: dur(time.Hour), MaxFailures: ptr(1), Interval: dur(time.Minute)}
	for typ, want := range map[string][]string{
		RestartNone:             {"attempts", "delay", "initialBackoff", "maxBackoff", "multiplier", "jitter", "resetThreshold", "maxFailures", "interval"},
		RestartFixedDelay:       {"initialBackoff", "maxBackoff", "multiplier", "jitter", "resetThreshold", "maxFailures", "interval"},
		RestartExponentialDelay: {"delay", "maxFailures", "interval"},
		RestartFailureRate:      {"attempts", "initialBackoff", "maxBackoff", "multiplier", "jitter", "resetThreshold"},
	} {
		t.Run(typ, func(t *testing.T) {
			s := *all
			s.Type = typ
			d := NewDecoder("")
			ValidateRestartSpec(d, "restartStrategy", &s)
			var got []string
			for _, fe := range d.Errors.Errors {
				got = append(got, fe.Field[len("restartStrategy."):])
				assert.Contains(t, fe.Msg, "does not apply to restart strategy "+typ)
			}
			assert.Equal(t, want, got)
		})
	}
}
