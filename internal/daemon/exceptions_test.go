package daemon_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// A failing job's exception history lists its failures with their times,
// the newest first, and a daemon restart keeps it and the job's events
// (they were lost: a restarted daemon showed a finished job with neither).
func TestExceptionsAndEventsSurviveRestart(t *testing.T) {
	home := t.TempDir()
	x := startDashAt(t, home, "")
	resp, err := x.d.Submit(api.SubmitRequest{Spec: `
name: doomed
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: boom, type: map, from: [gen], expr: "idx.nope"}
  - {uid: out, type: discard, from: [boom]}
`})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return x.state(resp.ID) == api.StateFailed }, 20*time.Second, 20*time.Millisecond)
	var info api.JobInfo
	x.getJSON("/v1/jobs/"+resp.ID, &info)

	var ex api.JobExceptions
	x.getJSON("/v1/jobs/"+resp.ID+"/exceptions", &ex)
	require.GreaterOrEqual(t, len(ex.Entries), 2, "every failed attempt: %+v", ex)
	require.False(t, ex.Truncated)
	newest := ex.Entries[0]
	require.Equal(t, info.Error, newest.Exception)
	require.Equal(t, info.ErrorTime.UnixMilli(), newest.Timestamp)
	require.Equal(t, info.Restarts, newest.Attempt)
	for i := 1; i < len(ex.Entries); i++ {
		require.True(t, ex.Entries[i].Time.Before(ex.Entries[i-1].Time), "newest first: %+v", ex.Entries)
		require.Equal(t, ex.Entries[i-1].Attempt-1, ex.Entries[i].Attempt, "one per attempt: %+v", ex.Entries)
		require.Contains(t, ex.Entries[i].Exception, "boom")
	}
	var logs api.JobLogs
	x.getJSON("/v1/jobs/"+resp.ID+"/logs", &logs)
	require.NotEmpty(t, logs.Events)
	// Let the sampler take its last look at the ended job first.
	time.Sleep(1500 * time.Millisecond)
	x.getJSON("/v1/jobs/"+resp.ID+"/logs", &logs)
	x.stop()

	y := startDashAt(t, home, "")
	var again api.JobExceptions
	y.getJSON("/v1/jobs/"+resp.ID+"/exceptions", &again)
	require.Len(t, again.Entries, len(ex.Entries))
	for i := range ex.Entries {
		require.Equal(t, ex.Entries[i].Exception, again.Entries[i].Exception)
		require.True(t, ex.Entries[i].Time.Equal(again.Entries[i].Time))
	}
	var after api.JobLogs
	y.getJSON("/v1/jobs/"+resp.ID+"/logs", &after)
	require.Len(t, after.Events, len(logs.Events)+1, "the events before the restart, and a line saying where they end")
	for i, ev := range logs.Events {
		require.Equal(t, ev.Message, after.Events[i].Message)
		require.Equal(t, ev.Seq, after.Events[i].Seq)
	}
	require.Contains(t, after.Events[len(after.Events)-1].Message, "daemon restarted")
}
