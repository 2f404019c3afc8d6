package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// `flinkgo info` lists a job's last failures with their times and
// attempts, and a daemon restart keeps them (as Flink's exception
// history): before, info showed only the last error and a restarted
// daemon had no events for the job.
func TestInfoListsFailuresAcrossRestart(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	defer e.killDaemon()
	r := e.run("run", e.writeSpec("doomed.yaml", `
name: doomed
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: boom, type: map, from: [gen], expr: "idx.nope"}
  - {uid: out, type: discard, from: [boom]}
`), "-o", "json")
	var id string
	for _, l := range strings.Split(e.mustRun("list", "-a"), "\n")[1:] {
		if strings.Contains(l, "doomed") {
			id = strings.Fields(l)[0]
		}
	}
	require.NotEmpty(t, id, "run: %s %s", r.stdout, r.stderr)
	e.waitState(id, api.StateFailed, 30*time.Second)
	time.Sleep(1500 * time.Millisecond) // the sampler's last look
	check := func() {
		t.Helper()
		out := e.mustRun("info", id)
		_, failures, ok := strings.Cut(out, "FAILURES (newest first)\n")
		require.True(t, ok, out)
		lines := strings.Split(strings.TrimSpace(failures), "\n")
		require.GreaterOrEqual(t, len(lines), 2, out)
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\S+  attempt 1  .*boom`, lines[0], out)
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\S+  attempt 0  .*boom`, lines[1], out)
	}
	check()
	code, _ := e.stopDaemon()
	require.Equal(t, 0, code)
	e.startDaemon()
	check()
	logs := e.run("logs", id)
	require.Equal(t, 0, logs.code, logs.stderr)
	require.Contains(t, logs.stderr, "→ FAILED", "the events from before the restart")
	require.Contains(t, logs.stderr, "daemon restarted")
}
