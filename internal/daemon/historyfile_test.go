package daemon_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// An ended job's charts survive a daemon restart: the job's page after it
// draws the samples and checkpoints the daemon that ran the job took (they
// were lost: a restarted daemon showed a finished job with empty charts).
// The history is read back only when the page asks for it.
func TestEndedJobsChartsSurviveRestart(t *testing.T) {
	home := t.TempDir()
	x := startDashAt(t, home, "")
	resp, err := x.d.Submit(api.SubmitRequest{Spec: `
name: short
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, count: 2500, rate: 1000}
  - {uid: out, type: discard, from: [gen]}
`})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return x.state(resp.ID) == api.StateFinished }, 20*time.Second, 20*time.Millisecond)
	file := filepath.Join(home, "jobs", resp.ID, "history.gob.gz")
	require.Eventually(t, func() bool { _, err := os.Stat(file); return err == nil }, 5*time.Second, 20*time.Millisecond,
		"the sampler's last look at the ended job writes its charts")
	var before api.JobHistory
	x.getJSON("/v1/jobs/"+resp.ID+"/history", &before)
	require.GreaterOrEqual(t, len(before.Times), 2, "%+v", before)
	require.NotEmpty(t, before.Checkpoints)
	require.Len(t, before.Operators, 2)
	x.stop()

	y := startDashAt(t, home, "")
	var after api.JobHistory
	y.getJSON("/v1/jobs/"+resp.ID+"/history", &after)
	require.Equal(t, before, after, "the same charts after the restart")
	var since api.JobHistory
	y.getJSON("/v1/jobs/"+resp.ID+"/history?since="+itoa(before.Times[len(before.Times)-2]), &since)
	require.Len(t, since.Times, 1, "a page asks for the samples after the newest it has")

	// A file that cannot be read shows empty charts; the page still works.
	y.stop()
	require.NoError(t, os.WriteFile(file, []byte("not gzip"), 0o600))
	z := startDashAt(t, home, "")
	var none api.JobHistory
	z.getJSON("/v1/jobs/"+resp.ID+"/history", &none)
	require.Empty(t, none.Times)
}
