package cli

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// printed runs print with a command writing into buffers and returns
// stdout.
func printed(print func(cmd *cobra.Command)) string {
	var out bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	print(cmd)
	return out.String()
}

// info of a failed HA job with event time: its owner and pid, the error
// and the root cause that came first, the watermark columns (the final
// watermark is "end", none yet "-"), shares "-" once it ended, problems and
// texts under the table.
func TestPrintInfo(t *testing.T) {
	wm, end, lag := int64(1767225600000), runtime.MaxWatermark, int64(90_500)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := &api.JobInfo{ID: "3f2a1c", Name: "clicks", State: api.StateFailed, Owner: "host-a:8082", OwnerPID: 4242,
		Error: "sink: disk full", RootCause: "source: broker gone", Failures: 3, RootCauseTime: &at, SubmitTime: at,
		Operators: []api.OperatorInfo{
			{UID: "src", Type: "kafka", Parallelism: 2, RecordsOut: 10, OutputWatermark: &end, Metrics: map[string]int64{"lag": 3, "bytes": 9}},
			{UID: "win", Type: "window", Parallelism: 2, RecordsIn: 10, InputWatermark: &wm, WatermarkLagMs: &lag,
				Problems: []string{"late records dropped"}, Texts: map[string][]string{"keys": {"a", "b"}}},
			{UID: "out", Type: "file", Parallelism: 1},
		}}
	requireLines(t, printed(func(cmd *cobra.Command) { printInfo(cmd, info) }),
		`id: +3f2a1c`,
		`state: +FAILED`,
		`owner: +host-a:8082 \(pid 4242\)`,
		`error: +sink: disk full`,
		`root cause: +source: broker gone \(the first of 3 failures, \S+\)`,
		`checkpointing: +off`,
		`OPERATOR +TYPE +PARALLELISM +RECORDS IN +RECORDS OUT +BUSY +BACKPRESSURED +IDLE +WATERMARK IN +WATERMARK OUT +LAG +METRICS`,
		`src +kafka +2 +0 +10 +- +- +- +- +end +- +bytes=9 lag=3 *`,
		`win +window +2 +10 +0 +- +- +- +2026-01-01T00:00:00\.000Z +- +1m31s *`,
		`out +file +1 +0 +0 +- +- +- +- +- +- *`,
		`PROBLEM win late records dropped`,
		`win keys: \[0\] a \[1\] b`)
}

func TestLagAndWatermarkText(t *testing.T) {
	for ms, want := range map[int64]string{1234: "1.234s", 90_500: "1m31s", 3 * 24 * 3600 * 1000: "3d"} {
		assert.Equal(t, want, lagText(ms))
	}
	assert.Equal(t, "-", watermarkText(nil))
	end := runtime.MaxWatermark
	assert.Equal(t, "end", watermarkText(&end))
	assert.Equal(t, "-", pidText(0))
	assert.Equal(t, "-", orDash(""))
}

// A restore plan: rescaled and refused operators, state the job drops
// (UNMATCHED unless -n), new operators, notes and warnings; "the restore
// can go ahead" only without problems.
func TestPrintPlan(t *testing.T) {
	plan := &api.RestorePlan{From: "/sp/savepoint-1", Kind: "savepoint", ID: 7,
		Matched: []api.MatchedState{
			{UID: "gen", Type: "datagen", OldParallelism: 2, NewParallelism: 4, Bytes: 40},
			{UID: "win", Type: "window", NewType: "reduce", OldParallelism: 1, NewParallelism: 1, Bytes: 9, Problem: "its type changed"},
			{UID: "out", Type: "file", OldParallelism: 1, NewParallelism: 1, Bytes: 3, Outputs: []api.RestoredOutput{{Path: "/out", Effect: "continues"}}},
		},
		Dropped:  []api.DroppedState{{UID: "old", Type: "count", Bytes: 5}},
		New:      []string{"fresh"},
		Problems: []string{"win: its type changed"},
		Notes:    []string{"a note"},
		Warnings: []string{"a warning"},
	}
	g := &globals{output: "text"}
	text := printed(func(cmd *cobra.Command) { printPlan(cmd, g, plan) })
	requireLines(t, text,
		`restore from /sp/savepoint-1 \(savepoint 7\)`,
		`  matched  gen +datagen +parallelism 2 -> 4 \(rescaled\), 40 bytes`,
		`  REFUSED  win +window -> reduce 9 bytes: its type changed`,
		`  matched  out +file +parallelism 1, 3 bytes`,
		`           writes into /out: continues`,
		`  UNMATCHED old +count +5 bytes`,
		`  new      fresh +\(starts empty\)`,
		`note: a note`,
		`  WARNING  a warning`)
	require.NotContains(t, text, "the restore can go ahead")

	plan.Problems, plan.AllowDrop = nil, true
	text = printed(func(cmd *cobra.Command) { printPlan(cmd, g, plan) })
	requireLines(t, text, `  DROPPED  old +count +5 bytes`, `the restore can go ahead`)
}

// info lists the newest failures; when it shows fewer than the daemon
// keeps, its title says where the rest is.
func TestPrintExceptions(t *testing.T) {
	var ex api.JobExceptions
	require.Empty(t, printed(func(cmd *cobra.Command) { printExceptions(cmd, &ex, 5) }), "no failures: no section")
	for i := 7; i >= 1; i-- {
		ex.Entries = append(ex.Entries, api.JobException{Time: time.Unix(int64(i), 0), Attempt: i, Exception: fmt.Sprintf("failure %d", i)})
	}
	text := printed(func(cmd *cobra.Command) { printExceptions(cmd, &ex, 5) })
	requireLines(t, text, `FAILURES \(the last 5, newest first; GET /v1/jobs/\{id\}/exceptions has more\)`,
		`\S+  attempt 7  failure 7`, `\S+  attempt 3  failure 3`)
	require.NotContains(t, text, "failure 2")
	ex.Entries = ex.Entries[:2]
	requireLines(t, printed(func(cmd *cobra.Command) { printExceptions(cmd, &ex, 5) }), `FAILURES \(newest first\)`)
}

// logs: the job's print output on stdout, its events and what rotation
// cut away on stderr; -f -o json one line per answer, none for an empty
// one.
func TestPrintLogs(t *testing.T) {
	logs := &api.JobLogs{State: api.StateRunning, Output: []string{`{"idx": 1}`, `{"idx": 2}`}, OutputSkipped: 100,
		Events: []api.JobEvent{{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.Local), Severity: "warning", Message: "checkpoint 3 failed"}}}
	var out, errOut bytes.Buffer
	printLogs(&out, &errOut, logs)
	require.Equal(t, "{\"idx\": 1}\n{\"idx\": 2}\n", out.String())
	require.Equal(t, "(100 bytes of output were rotated away before they could be read)\n2026-01-01 00:00:00.000 warning checkpoint 3 failed\n", errOut.String())

	out.Reset()
	require.NoError(t, printLogsJSON(&out, logs, true))
	require.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), "one line when following: %s", out.String())
	out.Reset()
	require.NoError(t, printLogsJSON(&out, &api.JobLogs{State: api.StateRunning}, true))
	require.Empty(t, out.String(), "nothing new, nothing printed")
}

// run's error when a job's first attempt fails: FAILED, or restarting
// with how to follow and stop it.
func TestAttemptFailed(t *testing.T) {
	err := attemptFailed(&api.JobInfo{ID: "3f2a", State: api.StateFailed, Error: "boom"}, "at start")
	require.EqualError(t, err, "job 3f2a failed at start: boom")
	require.Equal(t, 1, ExitCode(err))
	err = attemptFailed(&api.JobInfo{ID: "3f2a", State: api.StateRestarting}, "1.2s after it started")
	require.EqualError(t, err, "job 3f2a failed 1.2s after it started and is restarting by its restart strategy (flinkgo info 3f2a shows how it goes; flinkgo cancel 3f2a stops it)")
}

// $FLINKGO_WAIT_RUNNING sets run's default watch; a bad value is a usage
// error naming the variable.
func TestDefaultWaitRunning(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 2 * time.Second, "0": 0, "500ms": 500 * time.Millisecond} {
		t.Setenv(waitRunningEnv, v)
		d, err := defaultWaitRunning()
		require.NoError(t, err, v)
		require.Equal(t, want, d, v)
	}
	for _, v := range []string{"soon", "-1s"} {
		t.Setenv(waitRunningEnv, v)
		_, err := defaultWaitRunning()
		require.ErrorContains(t, err, `$FLINKGO_WAIT_RUNNING="`+v+`": want a duration such as 2s or 0`)
		require.Equal(t, 2, ExitCode(err))
	}
}
