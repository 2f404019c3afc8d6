package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// shares returns, per operator uid, the share of each subtask's time that
// went to busy, backpressured and idle between two infos (the largest over
// subtasks, as the daemon reports operators).
func shares(t *testing.T, a, b api.JobInfo) map[string][3]float64 {
	t.Helper()
	out := map[string][3]float64{}
	for i, op := range b.Operators {
		var m [3]float64
		require.Len(t, op.Subtasks, op.Parallelism, op.UID)
		for k, s := range op.Subtasks {
			p := a.Operators[i].Subtasks[k]
			d := [3]int64{s.AccumulatedBusyTimeMs - p.AccumulatedBusyTimeMs, s.AccumulatedBackPressuredTimeMs - p.AccumulatedBackPressuredTimeMs,
				s.AccumulatedIdleTimeMs - p.AccumulatedIdleTimeMs}
			total := d[0] + d[1] + d[2]
			require.Greater(t, total, int64(500), "%s[%d]: the three times add up to the time passed", op.UID, k)
			for x := range m {
				m[x] = max(m[x], float64(d[x])/float64(total))
			}
		}
		out[op.UID] = m
	}
	return out
}

// A slow sink backpressures everything upstream of it: the source and the
// operator between spend their time waiting for room in a full channel,
// the sink is busy; a source with nothing to read and what follows it are
// idle.
func TestBusyBackpressuredIdle(t *testing.T) {
	name := fmt.Sprintf("slow-%d", time.Now().UnixNano())
	defer runtimetest.Reset(name)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: slow-sink
operators:
  - {uid: fast, type: datagen, format: raw}
  - {uid: pass, type: test-pass, from: [fast]}
  - {uid: slow, type: test-collect, from: [pass], name: %s, delay: 20ms}
  - {uid: trickle, type: datagen, rate: 1}
  - {uid: idle-pass, type: test-pass, from: [trickle]}
  - {uid: idle-sink, type: discard, from: [idle-pass]}
`, name), runtimetest.Options{Types: testTypes})
	defer func() {
		require.NoError(t, j.Cancel())
		runtimetest.Wait(t, j, 30*time.Second)
	}()
	require.Eventually(t, func() bool { return j.State() == api.StateRunning }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // past the start: the channels fill up
	first := j.Info()
	time.Sleep(2 * time.Second)
	s := shares(t, first, j.Info())
	const busy, bp, idle = 0, 1, 2
	t.Logf("busy, backpressured, idle shares: %v", s)
	require.GreaterOrEqual(t, s["fast"][bp], 0.8, "the source waits for the slow sink: %v", s)
	require.GreaterOrEqual(t, s["pass"][bp], 0.8, "the operator between waits too: %v", s)
	require.GreaterOrEqual(t, s["slow"][busy], 0.8, "the sink is busy: %v", s)
	require.GreaterOrEqual(t, s["trickle"][idle], 0.8, "a source with nothing to read is idle: %v", s)
	require.GreaterOrEqual(t, s["idle-pass"][idle], 0.8, "its reader waits for input: %v", s)
	require.GreaterOrEqual(t, s["idle-sink"][idle], 0.8, "%v", s)
	require.Less(t, s["slow"][bp], 0.05, "a sink has no output to wait for: %v", s)
}

// The accumulated times of a subtask add up to the time since it started.
func TestAccumulatedTimesAddUp(t *testing.T) {
	j := runtimetest.Start(t, `
name: adds-up
operators:
  - {uid: gen, type: datagen, rate: 1000, format: raw}
  - {uid: out, type: discard, from: [gen], parallelism: 2}
`, runtimetest.Options{Types: testTypes})
	defer func() {
		require.NoError(t, j.Cancel())
		runtimetest.Wait(t, j, 30*time.Second)
	}()
	require.Eventually(t, func() bool {
		info := j.Info()
		return info.State == api.StateRunning && len(info.Operators[1].Subtasks) == 2
	}, 10*time.Second, 5*time.Millisecond)
	start := time.Now()
	time.Sleep(300 * time.Millisecond)
	info := j.Info()
	passed := time.Since(start).Milliseconds()
	for _, op := range info.Operators {
		for _, s := range op.Subtasks {
			sum := s.AccumulatedBusyTimeMs + s.AccumulatedBackPressuredTimeMs + s.AccumulatedIdleTimeMs
			// less a poll in progress (counted once it returns) and rounding
			require.GreaterOrEqual(t, sum, passed-60, "%s[%d]: %+v", op.UID, s.Index, s)
		}
	}
}
