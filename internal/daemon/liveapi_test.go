package daemon_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/daemon/dashboard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

const printJob = `
name: printing
operators:
  - {uid: gen, type: datagen, rate: 200, format: json}
  - {uid: show, type: print, from: [gen]}
`

// The dashboard's new read APIs: the sampled history grows once a second
// and answers only what is newer than asked; the logs hold the print
// output and the job's events, and can be followed; /metrics has the
// shares of time. They are read APIs like the others: open to GET, under
// the same headers and Host check.
func TestHistoryLogsAndTimesAPIs(t *testing.T) {
	x := startDash(t)
	resp, err := x.d.Submit(api.SubmitRequest{Spec: printJob, File: "print.yaml"})
	require.NoError(t, err)
	id := resp.ID

	var h api.JobHistory
	require.Eventually(t, func() bool {
		x.getJSON("/v1/jobs/"+id+"/history", &h)
		return len(h.Times) >= 3 && h.RecordsInPerSec[len(h.Times)-1] > 0
	}, 15*time.Second, 100*time.Millisecond)
	require.Equal(t, int64(1000), h.StepMs)
	require.Equal(t, int64(15*60*1000), h.SpanMs)
	require.Len(t, h.Operators, 2)
	require.Equal(t, "gen", h.Operators[0].UID)
	for _, op := range h.Operators {
		require.Len(t, op.RecordsInPerSec, len(h.Times))
		require.Len(t, op.IdleTimeMsPerSecond, len(h.Times))
	}
	require.InDelta(t, 200, h.RecordsInPerSec[len(h.Times)-1], 120, "the source's rate")
	require.Greater(t, h.Operators[0].IdleTimeMsPerSecond[len(h.Times)-1], int64(500), "a slow source is mostly idle")

	last := h.Times[len(h.Times)-1]
	var newer api.JobHistory
	require.Eventually(t, func() bool {
		x.getJSON("/v1/jobs/"+id+"/history?since="+itoa(last), &newer)
		return len(newer.Times) > 0
	}, 5*time.Second, 100*time.Millisecond)
	require.Greater(t, newer.Times[0], last, "only samples after since")
	require.Less(t, len(newer.Times), len(h.Times)+3)

	var logs api.JobLogs
	require.Eventually(t, func() bool {
		x.getJSON("/v1/jobs/"+id+"/logs?lines=5", &logs)
		return len(logs.Output) == 5
	}, 10*time.Second, 50*time.Millisecond)
	require.Contains(t, logs.Output[0], `"idx"`)
	require.Equal(t, api.StateRunning, logs.State)
	require.NotEmpty(t, logs.Events)
	require.Equal(t, "RUNNING", logs.Events[0].Message)
	var more api.JobLogs
	require.Eventually(t, func() bool {
		x.getJSON("/v1/jobs/"+id+"/logs?output="+itoa(logs.OutputNext)+"&events="+itoa(logs.EventsNext), &more)
		return len(more.Output) > 0
	}, 10*time.Second, 50*time.Millisecond)
	require.NotEqual(t, logs.Output[4], more.Output[0], "the follower reads on after the tail")
	require.Empty(t, more.Events, "no new event")

	_, _, metrics := x.do(http.MethodGet, "/metrics")
	require.Contains(t, metrics, `flinkgo_operator_idle_time_ms_per_second{job_id="`+id+`",job_name="printing",operator="gen",type="datagen"}`)
	require.Contains(t, metrics, `flinkgo_task_busy_time_ms_per_second{job_id="`+id+`",job_name="printing",operator="show",subtask="0",type="print"}`)
	require.Contains(t, metrics, `flinkgo_task_accumulated_time_ms_total{job_id="`+id+`",job_name="printing",operator="show",subtask="0",time="idle",type="print"}`)

	for _, path := range []string{"/v1/jobs/" + id + "/history", "/v1/jobs/" + id + "/logs"} {
		code, hd, _ := x.do(http.MethodGet, path)
		require.Equal(t, http.StatusOK, code, path)
		require.Equal(t, dashboard.ContentSecurityPolicy, hd.Get("Content-Security-Policy"), path)
		require.Equal(t, "no-store", hd.Get("Cache-Control"), path)
		code, _, _ = x.do(http.MethodGet, path, "Host: evil.example:80")
		require.Equal(t, http.StatusMisdirectedRequest, code, "%s: another name's Host is refused", path)
		code, _, _ = x.do(http.MethodPost, path)
		require.NotEqual(t, http.StatusOK, code, path)
	}
	code, _, body := x.do(http.MethodGet, "/v1/jobs/"+id+"/logs?output=-3")
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "output must be a non-negative integer")
	code, _, _ = x.do(http.MethodGet, "/v1/jobs/nope/history")
	require.Equal(t, http.StatusNotFound, code)

	// The overview's sparkline: one point per 5 samples.
	var ov api.Overview
	x.getJSON("/v1/overview", &ov)
	require.NotEmpty(t, ov.Jobs[0].Sparkline)
	require.True(t, strings.HasPrefix(ov.Jobs[0].ID, id[:8]))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
