package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestKeyedCountExactAfterFailures(t *testing.T) {
	for _, at := range []string{"process", "snapshot", "notify"} {
		t.Run(at, func(t *testing.T) {
			name := fmt.Sprintf("exact-%s-%d", at, time.Now().UnixNano())
			runtimetest.Reset(name)
			j := runtimetest.Start(t, fmt.Sprintf(`
name: exact
parallelism: 2
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: 20000, rate: 40000}
  - {uid: fail, type: test-fail, from: [gen], name: %s, every: 3000, times: 3, at: %s}
  - {uid: key, type: keyBy, from: [fail], expr: "idx %% 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: %s, parallelism: 1}
`, name, at, name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			require.Equal(t, int64(3), runtimetest.Fired(name))
			// Two subtasks may fail in the same attempt: one restart.
			require.GreaterOrEqual(t, j.Info().Restarts, 2)
			final := runtimetest.MaxCounts(t, runtimetest.Values(name))
			total := 0
			for _, n := range final {
				total += n
			}
			require.Equal(t, 20000, total, "counts %v", final)
		})
	}
}

// The figures the dashboard shows: triggered and restored counts, the last
// error with its time, the median, and the graph's edges.
func TestInfoCountsTriggeredRestoredAndErrors(t *testing.T) {
	name := runtimetest.UniqueName(t)
	runtimetest.Reset(name)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: figures
parallelism: 1
checkpointing: {interval: 10ms}
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: 6000, rate: 20000}
  - {uid: fail, type: test-fail, from: [gen], name: %s, every: 4000, times: 1, at: notify}
  - {uid: key, type: keyBy, from: [fail], expr: "idx %% 3"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: %s}
`, name, name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	// The failure comes with a checkpoint's completion, so the restart has
	// a checkpoint to resume from however slowly the machine runs.
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)

	info := j.Info()
	require.Contains(t, info.Error, "injected", "the last failure stays visible after the restart")
	require.NotNil(t, info.ErrorTime)
	require.WithinDuration(t, time.Now(), *info.ErrorTime, 30*time.Second)
	require.Empty(t, info.Operators[0].Inputs, "a source has no inputs")
	require.Equal(t, []api.OperatorInput{{UID: "fail", Partitioning: "forward"}}, info.Operators[2].Inputs)
	require.Equal(t, []api.OperatorInput{{UID: "key", Partitioning: "hash"}}, info.Operators[3].Inputs)

	cp := j.Checkpoints()
	require.Equal(t, 1, cp.Counts.Restored, "the restart resumed from a checkpoint")
	require.NotNil(t, cp.Latest.Restored)
	require.GreaterOrEqual(t, cp.Counts.Triggered, cp.Counts.Completed+cp.Counts.Failed)
	require.Positive(t, cp.Counts.Completed)
	s := cp.Summary.DurationMs
	require.LessOrEqual(t, s.Min, s.Median)
	require.LessOrEqual(t, s.Median, s.Max)
	require.LessOrEqual(t, cp.Summary.Size.Min, cp.Summary.Size.Median)
	require.Positive(t, cp.Summary.Size.Median)
}

// Cancel with delete-on-cancellation (the default) deletes the checkpoints:
// the job then names no restore point, and its last checkpoint says it is
// gone, rather than pointing at deleted files.
func TestCancelDeletesRestorePoint(t *testing.T) {
	dir := t.TempDir()
	j := runtimetest.Start(t, `
name: gone
checkpointing: {interval: 20ms}
operators:
  - {uid: gen, type: datagen, rate: 5000}
  - {uid: out, type: discard, from: [gen]}
`, runtimetest.Options{Types: testTypes, CheckpointsDir: dir})
	cp := runtimetest.WaitCheckpoint(t, 10*time.Second, j)
	require.NotEmpty(t, j.Info().RestorePoint)
	require.DirExists(t, cp.Path)
	runtimetest.Cancel(t, 10*time.Second, j)
	info := j.Info()
	require.Empty(t, info.RestorePoint)
	require.NotNil(t, info.LatestCheckpoint)
	require.True(t, info.LatestCheckpoint.Discarded)
	require.NoDirExists(t, info.LatestCheckpoint.Path)
}
