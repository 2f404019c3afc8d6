package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

const countSpec = `
name: counting
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, count: 20000, rate: 4000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 5"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: print, from: [cnt]}
`

// finalCounts reads the highest count per key from the print output.
func finalCounts(t *testing.T, path string) map[string]int {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var key string
		var n int
		_, err := fmt.Sscanf(line, `{"key":%q,"count":%d}`, &key, &n)
		require.NoError(t, err, line)
		out[key] = max(out[key], n)
	}
	return out
}

func TestKillDaemonResumesFromCheckpoint(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	id := e.mustRun("run", e.writeSpec("count.yaml", countSpec))
	// Let a few checkpoints complete, then crash the daemon.
	deadline := time.Now().Add(20 * time.Second)
	for {
		info := e.info(id)
		if info.Checkpoints != nil && info.Checkpoints.Completed >= 3 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no checkpoints completed: %+v", info)
		time.Sleep(50 * time.Millisecond)
	}
	e.killDaemon()

	e.startDaemon()
	info := e.info(id)
	require.Contains(t, []api.JobState{api.StateRunning, api.StateFinished}, info.State, info.Error)
	require.Contains(t, info.RestoredFrom, filepath.Join("checkpoints", id, "chk-"), "restored from a checkpoint")
	info = e.waitState(id, api.StateFinished, 60*time.Second)
	counts := finalCounts(t, filepath.Join(e.home, "jobs", id, "job.out"))
	require.Len(t, counts, 5)
	for k, n := range counts {
		require.Equal(t, 4000, n, "key %s: state restored with loss or double counting", k)
	}
	require.Contains(t, e.stderr.String(), "resuming job after daemon restart")
}
