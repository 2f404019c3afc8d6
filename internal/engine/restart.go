package engine

import (
	"math/rand/v2"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// RestartPolicy decides, at each failure, whether and after how long the job
// restarts (Flink's RestartBackoffTimeStrategy). Pure: time comes in.
type RestartPolicy interface {
	// OnFailure records a failure at now and returns the delay before the
	// restart, or ok=false when the job must fail for good.
	OnFailure(now time.Time) (delay time.Duration, ok bool)
}

// NewRestartPolicy builds the policy of a resolved configuration. rnd is
// used for jitter (nil: a random source).
func NewRestartPolicy(c api.RestartConfig, rnd *rand.Rand) RestartPolicy {
	switch c.Type {
	case api.RestartFixedDelay:
		return &fixedDelay{attempts: c.Attempts, delay: c.Delay}
	case api.RestartExponentialDelay:
		if rnd == nil {
			rnd = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		}
		return &exponentialDelay{c: c, rnd: rnd}
	case api.RestartFailureRate:
		return &failureRate{max: c.MaxFailures, interval: c.Interval, delay: c.Delay}
	}
	return noRestart{}
}

type noRestart struct{}

func (noRestart) OnFailure(time.Time) (time.Duration, bool) { return 0, false }

// fixedDelay restarts attempts times, each after delay.
type fixedDelay struct {
	attempts, used int
	delay          time.Duration
}

func (f *fixedDelay) OnFailure(time.Time) (time.Duration, bool) {
	if f.used >= f.attempts {
		return 0, false
	}
	f.used++
	return f.delay, true
}

// exponentialDelay multiplies the delay at each failure up to MaxBackoff,
// with jitter; after ResetThreshold without failure it starts over. Attempts
// bounds the restarts between resets.
type exponentialDelay struct {
	c        api.RestartConfig
	rnd      *rand.Rand
	current  time.Duration
	used     int
	lastFail time.Time
}

func (e *exponentialDelay) OnFailure(now time.Time) (time.Duration, bool) {
	if !e.lastFail.IsZero() && now.Sub(e.lastFail) >= e.c.ResetThreshold+e.current {
		e.current, e.used = 0, 0 // the job ran long enough: back to the start
	}
	e.lastFail = now
	if e.c.Attempts > 0 && e.used >= e.c.Attempts {
		return 0, false
	}
	e.used++
	if e.current == 0 {
		e.current = e.c.InitialBackoff
	} else {
		// In floats: current * multiplier may not fit a Duration.
		next := float64(e.current) * e.c.Multiplier
		e.current = e.c.MaxBackoff
		if next < float64(e.c.MaxBackoff) {
			e.current = time.Duration(next)
		}
	}
	d := e.current
	if e.c.Jitter > 0 {
		j := float64(d) * e.c.Jitter
		d += time.Duration((e.rnd.Float64()*2 - 1) * j)
	}
	return max(d, 0), true
}

// failureRate fails the job when more than max failures happen within
// interval; each restart waits delay.
type failureRate struct {
	max      int
	interval time.Duration
	delay    time.Duration
	times    []time.Time
}

func (f *failureRate) OnFailure(now time.Time) (time.Duration, bool) {
	f.times = append(f.times, now)
	cut := 0
	for cut < len(f.times) && now.Sub(f.times[cut]) > f.interval {
		cut++
	}
	f.times = f.times[cut:]
	if len(f.times) > f.max {
		return 0, false
	}
	return f.delay, true
}
