package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestRatesBetweenSamples(t *testing.T) {
	at := time.Unix(1000, 0)
	info := func(in, out int64, state api.JobState, sub ...api.SubtaskInfo) *api.JobInfo {
		return &api.JobInfo{ID: "j", State: state, Operators: []api.OperatorInfo{{RecordsIn: in, RecordsOut: out, Subtasks: sub}}}
	}
	sub := func(busy, bp, idle int64) api.SubtaskInfo {
		return api.SubtaskInfo{AccumulatedBusyTimeMs: busy, AccumulatedBackPressuredTimeMs: bp, AccumulatedIdleTimeMs: idle}
	}
	first := countersOf(info(0, 100, api.StateRunning, sub(0, 0, 0), sub(0, 0, 0)), at)
	second := countersOf(info(50, 1100, api.StateRunning, sub(100, 1900, 0), sub(1500, 0, 500)), at.Add(2*time.Second))
	r := ratesBetween(first, second)
	x := info(50, 1100, api.StateRunning, sub(0, 0, 0), sub(0, 0, 0))
	r.apply(x)
	op := x.Operators[0]
	require.Equal(t, 25.0, op.RecordsInPerSec)
	require.Equal(t, 500.0, op.RecordsOutPerSec)
	require.Equal(t, []int64{50, 950, 0}, []int64{op.Subtasks[0].BusyTimeMsPerSecond, op.Subtasks[0].BackPressuredTimeMsPerSecond, op.Subtasks[0].IdleTimeMsPerSecond})
	require.Equal(t, []int64{750, 0, 250}, []int64{op.Subtasks[1].BusyTimeMsPerSecond, op.Subtasks[1].BackPressuredTimeMsPerSecond, op.Subtasks[1].IdleTimeMsPerSecond})
	require.Equal(t, []int64{750, 950, 250}, []int64{op.BusyTimeMsPerSecond, op.BackPressuredTimeMsPerSecond, op.IdleTimeMsPerSecond},
		"an operator shows the largest share of each over its subtasks")

	// A counter that went down (a restart) gives no negative rate, and
	// times that went down no share.
	third := countersOf(info(0, 0, api.StateRunning, sub(10, 0, 0), sub(1600, 0, 600)), at.Add(3*time.Second))
	r = ratesBetween(second, third)
	x = info(0, 0, api.StateRunning, sub(0, 0, 0), sub(0, 0, 0))
	r.apply(x)
	require.Zero(t, x.Operators[0].RecordsOutPerSec)
	require.Zero(t, x.Operators[0].Subtasks[0].BusyTimeMsPerSecond)
	require.Equal(t, int64(500), x.Operators[0].Subtasks[1].BusyTimeMsPerSecond)

	// A job that ended moves no records.
	x = info(10, 10, api.StateFinished, sub(0, 0, 0), sub(0, 0, 0))
	r.apply(x)
	require.Zero(t, x.Operators[0].RecordsInPerSec)
	require.Zero(t, x.Operators[0].Subtasks[1].BusyTimeMsPerSecond)
}

func TestAttention(t *testing.T) {
	at := time.Unix(2000, 0)
	failed := api.JobInfo{ID: "a", Name: "a", State: api.StateFailed, Error: "boom", EndTime: &at}
	got := attention(failed, api.CheckpointsInfo{})
	require.Equal(t, []api.Attention{{JobID: "a", JobName: "a", Severity: "error", Message: "job FAILED: boom", Time: at}}, got)

	restarting := api.JobInfo{ID: "b", State: api.StateRunning, Restarts: 2, Error: "disk", ErrorTime: &at}
	got = attention(restarting, api.CheckpointsInfo{})
	require.Len(t, got, 1)
	require.Contains(t, got[0].Message, "restarted 2 time(s); last failure: disk")

	ok := &api.CheckpointInfo{ID: 4, Kind: "checkpoint"}
	bad := &api.CheckpointInfo{ID: 5, Kind: "checkpoint", FailureReason: "timeout", TriggerTime: at}
	running := api.JobInfo{ID: "c", State: api.StateRunning}
	got = attention(running, api.CheckpointsInfo{Counts: api.CheckpointCounts{Failed: 3}, Latest: api.LatestCheckpoints{Completed: ok, Failed: bad}})
	require.Len(t, got, 1)
	require.Equal(t, "checkpoint 5 failed (3 failed in all, none completed since): timeout", got[0].Message)
	// A failure followed by a completed checkpoint needs no attention.
	got = attention(running, api.CheckpointsInfo{Latest: api.LatestCheckpoints{Completed: &api.CheckpointInfo{ID: 6}, Failed: bad}})
	require.Empty(t, got)

	// The root cause of a streak is named when it is not the last failure.
	failed.Error, failed.RootCause, failed.Failures = "connection refused", "no successful fetch for 60s", 3
	got = attention(failed, api.CheckpointsInfo{})
	require.Equal(t, "job FAILED: connection refused; root cause (the first of 3 failures): no successful fetch for 60s", got[0].Message)

	// A running source that cannot read is on the list.
	running.Operators = []api.OperatorInfo{{UID: "in", Problems: []string{"subtask 0: partition t/0 cannot fetch since 12:00:00: refused"}}}
	got = attention(running, api.CheckpointsInfo{})
	require.Len(t, got, 1)
	require.Equal(t, "warning", got[0].Severity)
	require.Equal(t, "operator in: subtask 0: partition t/0 cannot fetch since 12:00:00: refused", got[0].Message)
}

func TestSummarizeRatesBySourcesAndSinks(t *testing.T) {
	sub := time.Unix(0, 0)
	end := sub.Add(90 * time.Second)
	s := summarize(api.JobInfo{SubmitTime: sub, EndTime: &end, Operators: []api.OperatorInfo{
		{UID: "k", RecordsOutPerSec: 100},
		{UID: "n", RecordsOutPerSec: 7},
		{UID: "u", Inputs: []api.OperatorInput{{UID: "k"}, {UID: "n"}}, RecordsInPerSec: 107, RecordsOutPerSec: 50},
		{UID: "f", Inputs: []api.OperatorInput{{UID: "u"}}, RecordsInPerSec: 50},
		{UID: "p", Inputs: []api.OperatorInput{{UID: "u"}}, RecordsInPerSec: 50},
	}}, time.Now())
	require.Equal(t, 107.0, s.RecordsInPerSec, "two sources")
	require.Equal(t, 100.0, s.RecordsOutPerSec, "two sinks")
	require.Equal(t, int64(90000), s.UptimeMs, "uptime stops at the end")
}
