package engine_test

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// restarts plays a job that fails after running for each of runs in turn
// (the last one repeats), under policy p, in a synctest bubble: time.Sleep
// advances the bubble's fake clock at once, so hours of restarts take no
// real time. It returns the delays granted and whether the job finally
// failed for good.
func restarts(p engine.RestartPolicy, max int, runs ...time.Duration) (delays []time.Duration, failed bool) {
	for i := 0; i < max; i++ {
		run := runs[min(i, len(runs)-1)]
		time.Sleep(run) // the job runs, then fails
		d, ok := p.OnFailure(time.Now())
		if !ok {
			return delays, true
		}
		delays = append(delays, d)
		time.Sleep(d) // the restart delay
	}
	return delays, false
}

func seconds(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

// TestRestartNeedsNoRealSleep: a day of simulated restarts runs in a
// synctest bubble in (much) less than a real second.
func TestRestartNeedsNoRealSleep(t *testing.T) {
	realStart := time.Now()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		p := engine.NewRestartPolicy(api.RestartConfig{Type: api.RestartFixedDelay, Attempts: 1000, Delay: time.Minute}, nil)
		delays, failed := restarts(p, 2000, 30*time.Second)
		assert.True(t, failed)
		assert.Len(t, delays, 1000)
		assert.Equal(t, 1000*time.Minute+1001*30*time.Second, time.Since(start), "fake time passed")
	})
	assert.Less(t, time.Since(realStart), time.Second, "real time did not")
}

func TestRestartFixedDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := engine.NewRestartPolicy(api.RestartConfig{Type: api.RestartFixedDelay, Attempts: 3, Delay: 10 * time.Second}, nil)
		delays, failed := restarts(p, 10, time.Hour, 0)
		assert.Equal(t, seconds(10, 10, 10), delays, "attempts count restarts however long the job ran")
		assert.True(t, failed, "the fourth failure is final")
		_, ok := p.OnFailure(time.Now())
		assert.False(t, ok, "and stays final")

		p = engine.NewRestartPolicy(api.RestartConfig{Type: api.RestartFixedDelay, Attempts: 0, Delay: time.Second}, nil)
		delays, failed = restarts(p, 10, 0)
		assert.Empty(t, delays, "attempts 0: no restart")
		assert.True(t, failed)

		p = engine.NewRestartPolicy(api.RestartConfig{Type: api.RestartFixedDelay, Attempts: 2}, nil)
		delays, _ = restarts(p, 10, 0)
		assert.Equal(t, seconds(0, 0), delays, "a zero delay restarts at once")
	})
}

func TestRestartNone(t *testing.T) {
	for _, typ := range []string{api.RestartNone, "", "bogus"} {
		p := engine.NewRestartPolicy(api.RestartConfig{Type: typ, Attempts: 5, Delay: time.Second}, nil)
		d, ok := p.OnFailure(time.Now())
		assert.False(t, ok, typ)
		assert.Zero(t, d, typ)
	}
}

func TestRestartExponentialDelay(t *testing.T) {
	exp := func(f func(*api.RestartConfig)) api.RestartConfig {
		c := api.RestartConfig{Type: api.RestartExponentialDelay, InitialBackoff: time.Second, MaxBackoff: 10 * time.Second,
			Multiplier: 2, ResetThreshold: time.Hour}
		if f != nil {
			f(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		cfg    api.RestartConfig
		runs   []time.Duration
		max    int
		want   []time.Duration
		failed bool
	}{
		{name: "doubles up to the cap, unlimited attempts", cfg: exp(nil), runs: []time.Duration{time.Minute}, max: 8,
			want: seconds(1, 2, 4, 8, 10, 10, 10, 10)},
		{name: "fractional multiplier", cfg: exp(func(c *api.RestartConfig) { c.Multiplier, c.MaxBackoff = 1.5, time.Minute }),
			runs: []time.Duration{0}, max: 5, want: seconds(1, 1.5, 2.25, 3.375, 5.0625)},
		{name: "multiplier 1 is a fixed delay", cfg: exp(func(c *api.RestartConfig) { c.Multiplier = 1 }),
			runs: []time.Duration{0}, max: 3, want: seconds(1, 1, 1)},
		{name: "initial above the cap stays at the initial first", cfg: exp(func(c *api.RestartConfig) { c.InitialBackoff = 20 * time.Second }),
			runs: []time.Duration{0}, max: 3, want: seconds(20, 10, 10)},
		{name: "attempts bound the restarts", cfg: exp(func(c *api.RestartConfig) { c.Attempts = 3 }),
			runs: []time.Duration{0}, max: 10, want: seconds(1, 2, 4), failed: true},
		// The job must run resetThreshold after its restart (the failure
		// time plus the delay) for the backoff to start over.
		{name: "reset after running resetThreshold", cfg: exp(nil),
			runs: []time.Duration{0, 0, 0, time.Hour, 0, 0}, max: 6, want: seconds(1, 2, 4, 1, 2, 4)},
		{name: "no reset a moment before the threshold", cfg: exp(nil),
			runs: []time.Duration{0, 0, 0, time.Hour - time.Nanosecond, 0}, max: 5, want: seconds(1, 2, 4, 8, 10)},
		{name: "a reset also resets the attempts", cfg: exp(func(c *api.RestartConfig) { c.Attempts = 2 }),
			runs: []time.Duration{0, 0, 2 * time.Hour, 0, 0}, max: 5, want: seconds(1, 2, 1, 2), failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := engine.NewRestartPolicy(tc.cfg, rand.New(rand.NewPCG(1, 2)))
				delays, failed := restarts(p, tc.max, tc.runs...)
				assert.Equal(t, tc.want, delays)
				assert.Equal(t, tc.failed, failed)
			})
		})
	}
}

// TestRestartExponentialJitter: with jitter j every delay lies within
// ±j of the backoff and the jitter really varies both ways.
func TestRestartExponentialJitter(t *testing.T) {
	for _, rnd := range []*rand.Rand{rand.New(rand.NewPCG(3, 4)), nil} {
		synctest.Test(t, func(t *testing.T) {
			cfg := api.RestartConfig{Type: api.RestartExponentialDelay, InitialBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second,
				Multiplier: 2, Jitter: 0.25, ResetThreshold: time.Hour}
			p := engine.NewRestartPolicy(cfg, rnd)
			delays, failed := restarts(p, 2000, 0)
			require.False(t, failed)
			lo, hi := delays[0], delays[0]
			for _, d := range delays {
				require.GreaterOrEqual(t, d, 7500*time.Millisecond)
				require.LessOrEqual(t, d, 12500*time.Millisecond)
				lo, hi = min(lo, d), max(hi, d)
			}
			assert.Less(t, lo, 8*time.Second, "jitter goes down")
			assert.Greater(t, hi, 12*time.Second, "and up")
		})
	}
	// Jitter 1 may take the delay down to zero, never below.
	synctest.Test(t, func(t *testing.T) {
		cfg := api.RestartConfig{Type: api.RestartExponentialDelay, InitialBackoff: time.Second, MaxBackoff: time.Second,
			Multiplier: 1, Jitter: 1, ResetThreshold: time.Hour}
		delays, _ := restarts(engine.NewRestartPolicy(cfg, rand.New(rand.NewPCG(5, 6))), 500, 0)
		for _, d := range delays {
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, 2*time.Second)
		}
	})
}

// TestRestartExponentialFlinkDefaults: the resolved defaults of a job with
// checkpointing and no restart strategy (Flink 1.19+).
func TestRestartExponentialFlinkDefaults(t *testing.T) {
	cfg := api.ResolveRestart(nil, nil, true)
	require.Equal(t, api.RestartExponentialDelay, cfg.Type)
	synctest.Test(t, func(t *testing.T) {
		delays, failed := restarts(engine.NewRestartPolicy(cfg, rand.New(rand.NewPCG(7, 8))), 15, 0)
		require.False(t, failed)
		backoff := time.Second
		for _, d := range delays {
			assert.InDelta(t, float64(backoff), float64(d), float64(backoff)*0.1+1, "1s x1.5 up to 1m, ±10%%")
			backoff = min(time.Duration(float64(backoff)*1.5), time.Minute)
		}
		assert.Equal(t, time.Minute, backoff)
	})
}

func TestRestartFailureRate(t *testing.T) {
	rate := api.RestartConfig{Type: api.RestartFailureRate, MaxFailures: 2, Interval: time.Minute, Delay: 5 * time.Second}
	for _, tc := range []struct {
		name   string
		runs   []time.Duration // time the job runs before each failure
		max    int
		want   int // restarts granted
		failed bool
	}{
		// Failures 0s, 15s, 30s after the first: three within a minute.
		{name: "too many failures within the interval", runs: []time.Duration{0, 10 * time.Second}, max: 10, want: 2, failed: true},
		// A failure every 40s (35s run + 5s delay): never three in a minute.
		{name: "failures spread out go on forever", runs: []time.Duration{35 * time.Second}, max: 50, want: 50},
		// Two quick failures, a long run, two quick failures: the window
		// slides past the first two.
		{name: "old failures leave the window", runs: []time.Duration{0, 0, 2 * time.Minute, 0}, max: 4, want: 4},
		{name: "three in the window again", runs: []time.Duration{0, 0, 2 * time.Minute, 0, 0}, max: 6, want: 4, failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				delays, failed := restarts(engine.NewRestartPolicy(rate, nil), tc.max, tc.runs...)
				assert.Len(t, delays, tc.want)
				for _, d := range delays {
					assert.Equal(t, 5*time.Second, d)
				}
				assert.Equal(t, tc.failed, failed)
			})
		})
	}
	// The window is inclusive: a failure exactly one interval ago counts.
	synctest.Test(t, func(t *testing.T) {
		p := engine.NewRestartPolicy(api.RestartConfig{Type: api.RestartFailureRate, MaxFailures: 1, Interval: time.Minute}, nil)
		_, ok := p.OnFailure(time.Now())
		require.True(t, ok)
		time.Sleep(time.Minute)
		_, ok = p.OnFailure(time.Now())
		assert.False(t, ok, "two failures exactly a minute apart are two in the window")
		p = engine.NewRestartPolicy(api.RestartConfig{Type: api.RestartFailureRate, MaxFailures: 1, Interval: time.Minute}, nil)
		_, ok = p.OnFailure(time.Now())
		require.True(t, ok)
		time.Sleep(time.Minute + time.Nanosecond)
		_, ok = p.OnFailure(time.Now())
		assert.True(t, ok, "a nanosecond later the first one has left")
	})
}
