package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// `flinkgo logs` prints the tail of a job's print output on stdout and its
// events on stderr; -f follows until the job ends, and every line the
// print sink wrote comes out once, in order.
func TestLogsCommand(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	defer e.stopDaemon()
	const records = 3000
	id := e.mustRun("run", e.writeSpec("print.yaml", fmt.Sprintf(`
name: printing
operators:
  - {uid: gen, type: datagen, count: %d, rate: 1000}
  - {uid: show, type: print, from: [gen]}
`, records)))
	var tail result
	require.Eventually(t, func() bool {
		tail = e.run("logs", id, "-n", "3")
		return tail.code == 0 && strings.Count(tail.stdout, "\n") == 3
	}, 20*time.Second, 100*time.Millisecond)
	require.Contains(t, tail.stderr, "info    RUNNING")
	require.Contains(t, tail.stdout, `{"idx": `)

	follow := e.run("logs", id, "-f", "-n", "1000")
	require.Equal(t, 0, follow.code, follow.stderr)
	lines := strings.Split(strings.TrimSpace(follow.stdout), "\n")
	require.Equal(t, `{"idx": `+fmt.Sprint(records)+`}`, lines[len(lines)-1], "-f printed up to the end of the job")
	for i := 1; i < len(lines); i++ {
		var a, b struct{ Idx int }
		require.NoError(t, json.Unmarshal([]byte(lines[i-1]), &a))
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &b))
		require.Equal(t, a.Idx+1, b.Idx, "every line once, in order")
	}
	require.Contains(t, follow.stderr, "RUNNING → FINISHED")
	require.Equal(t, api.StateFinished, e.info(id).State)

	var logs api.JobLogs
	require.NoError(t, json.Unmarshal([]byte(e.mustRun("logs", id, "-o", "json", "-n", "2")), &logs))
	require.Len(t, logs.Output, 2)
	require.Equal(t, api.StateFinished, logs.State)
	require.NotEmpty(t, logs.Events)

	r := e.run("logs", "nope")
	require.Equal(t, 4, r.code, r.stderr)
}
