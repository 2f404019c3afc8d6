package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

func historyInfo(in float64, lag *int64) *api.JobInfo {
	return &api.JobInfo{State: api.StateRunning, Operators: []api.OperatorInfo{
		{UID: "src", RecordsOutPerSec: in, BusyTimeMsPerSecond: 10, BackPressuredTimeMsPerSecond: 990, OutputWatermark: lag, WatermarkLagMs: lag},
		{UID: "sink", Inputs: []api.OperatorInput{{UID: "src"}}, RecordsInPerSec: in, BusyTimeMsPerSecond: 1000},
	}}
}

// The history holds the last 15 minutes in rings allocated once: samples
// of a run ten times as long take no more memory and allocate nothing.
func TestHistoryIsBounded(t *testing.T) {
	at := time.Unix(10_000, 0)
	info := historyInfo(5, nil)
	h := newHistory(info)
	caps := func() []int {
		c := []int{cap(h.times), cap(h.jobIn), cap(h.jobOut), cap(h.cps)}
		for _, s := range h.ops {
			c = append(c, cap(s.in), cap(s.out), cap(s.busy), cap(s.bp), cap(s.idle), cap(s.lag))
		}
		return c
	}
	sample := func() {
		at = at.Add(sampleEvery)
		h.add(at, info)
		h.addCheckpoint(api.CheckpointPoint{ID: at.Unix(), Time: at.UnixMilli()})
	}
	sample()
	for _, c := range caps() {
		require.LessOrEqual(t, c, 16, "a job sampled once holds little")
	}
	for range historyPoints {
		sample()
	}
	full := caps()
	require.Equal(t, historyPoints, full[0])
	require.Equal(t, historyCheckpoints, full[3])
	allocs := testing.AllocsPerRun(10*historyPoints, sample)
	require.Zero(t, allocs, "a sample of a full history allocates nothing")
	require.Equal(t, full, caps(), "the rings never grow past their size")
	require.Equal(t, historyPoints, h.n)
	require.Equal(t, historyCheckpoints, h.cpN)

	all := h.since(0)
	require.Len(t, all.Times, historyPoints)
	require.Equal(t, at.UnixMilli(), all.Times[len(all.Times)-1], "the newest sample last")
	require.Equal(t, at.Add(-historySpan+sampleEvery).UnixMilli(), all.Times[0], "15 minutes back")
	require.Len(t, all.Checkpoints, historyCheckpoints)
	require.Nil(t, all.Operators[0].WatermarkLagMs, "no event time, no lag series")
	require.Equal(t, int64(990), all.Operators[0].BackPressuredTimeMsPerSecond[0])
	require.Equal(t, 5.0, all.RecordsInPerSec[0])
	require.Equal(t, 5.0, all.RecordsOutPerSec[0])

	// A page that has the samples up to a time asks only for the rest.
	recent := h.since(at.Add(-3 * sampleEvery).UnixMilli())
	require.Len(t, recent.Times, 3)
	require.Len(t, recent.Operators[1].BusyTimeMsPerSecond, 3)
	require.Len(t, recent.Checkpoints, 3)
}

func TestHistoryWatermarkLagAndSparkline(t *testing.T) {
	at := time.Unix(10_000, 0)
	h := newHistory(historyInfo(0, nil))
	lag := int64(1500)
	for i := range 12 {
		var l *int64
		if i >= 2 {
			l = &lag
		}
		at = at.Add(sampleEvery)
		h.add(at, historyInfo(float64(i), l))
	}
	got := h.since(0)
	require.Len(t, got.Operators[0].WatermarkLagMs, 12)
	require.Nil(t, got.Operators[0].WatermarkLagMs[0], "before the first watermark")
	require.Equal(t, int64(1500), *got.Operators[0].WatermarkLagMs[11])
	// 12 samples in points of 5, ending at the newest: (0+1), (2..6), (7..11).
	require.Equal(t, []float64{0.5, 4, 9}, h.sparkline())
}

func TestEventLog(t *testing.T) {
	var l eventLog
	at := time.Unix(0, 0)
	evs, next := l.after(-1, 10)
	require.Empty(t, evs)
	require.Zero(t, next)
	for i := range eventsKept + 10 {
		l.add(at, "state", "info", string(rune('a'+i%26)))
	}
	evs, next = l.after(-1, 5)
	require.Len(t, evs, 5)
	require.Equal(t, int64(eventsKept+10), next)
	require.Equal(t, int64(eventsKept+6), evs[0].Seq, "the last five")
	evs, next = l.after(next, 5)
	require.Empty(t, evs)
	require.Equal(t, int64(eventsKept+10), next, "nothing new: the same position")
	evs, _ = l.after(0, 1000)
	require.Len(t, evs, eventsKept, "bounded")
	require.Equal(t, int64(11), evs[0].Seq, "the oldest ten were dropped")
	evs, next = l.after(20, 3)
	require.Equal(t, []int64{21, 22, 23}, []int64{evs[0].Seq, evs[1].Seq, evs[2].Seq})
	require.Equal(t, int64(23), next)
}

// What the log says of a job's life: its state changes with their
// causes, what a restart restored, failed checkpoints, savepoints and
// problems, each once.
func TestJobLiveEvents(t *testing.T) {
	var l jobLive
	at := time.Unix(100, 0)
	info := api.JobInfo{State: api.StateRunning, RestartStrategy: api.RestartConfig{Type: "fixed-delay"}, Operators: []api.OperatorInfo{{UID: "in"}}}
	l.observeState(&info, at)
	info.State, info.Error = api.StateFailing, "disk full"
	l.observeState(&info, at)
	info.State = api.StateRestarting
	l.observeState(&info, at)
	l.observeState(&info, at) // no change, no event
	info.State, info.Restarts, info.RestoredFrom = api.StateRunning, 1, "/cp/chk-4"
	l.observeState(&info, at)

	cps := api.CheckpointsInfo{History: []api.CheckpointInfo{
		{ID: 7, Kind: "checkpoint", Status: "IN_PROGRESS"},
		{ID: 6, Kind: "savepoint", Status: "COMPLETED", DurationMs: 12, Path: "/sp/savepoint-1", TriggerTime: at},
		{ID: 5, Kind: "checkpoint", Status: "FAILED", FailureReason: "timeout", TriggerTime: at},
		{ID: 4, Kind: "checkpoint", Status: "COMPLETED", TriggerTime: at},
	}}
	info.Operators[0].Problems = []string{"subtask 0: cannot fetch"}
	l.sample(at, info, cps)
	l.sample(at.Add(time.Second), info, cps) // nothing new

	evs, _ := l.eventsAfter(-1, 100)
	var msgs []string
	for _, e := range evs {
		msgs = append(msgs, e.Severity+" "+e.Message)
	}
	require.Equal(t, []string{
		"info RUNNING",
		"error RUNNING → FAILING: disk full",
		"warning FAILING → RESTARTING (restart 1, fixed-delay strategy)",
		"info RESTARTING → RUNNING (restored from /cp/chk-4)",
		"warning checkpoint 5 failed: timeout",
		"info savepoint 6 completed in 12 ms: /sp/savepoint-1",
		"warning operator in: subtask 0: cannot fetch",
	}, msgs)
	h := l.historySince(0, at)
	require.Len(t, h.Checkpoints, 3, "the finished ones")
	require.Len(t, h.Times, 2)

	// Once the job ended and its last sample is older than the span, its
	// history is dropped; its events stay.
	info.State = api.StateCanceled
	l.sample(at.Add(2*time.Second), info, cps)
	require.False(t, l.watching())
	l.expire(at.Add(time.Minute))
	require.NotNil(t, l.hist)
	l.expire(at.Add(historySpan + time.Minute))
	require.Nil(t, l.hist)
	require.Empty(t, l.historySince(0, at).Times)
	evs, _ = l.eventsAfter(-1, 100)
	require.Len(t, evs, 7)
}
