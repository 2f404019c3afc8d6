package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// A shutdown savepoint that cannot be written (its directory would be
// under a regular file: unusable even for root, which CI runs as) must not
// hold SIGTERM for the whole shutdown timeout: the job is suspended at
// once, the log says so and not that jobs did not stop in time, and the
// next daemon resumes the job from its latest checkpoint, exactly once.
func TestShutdownWithFailingSavepointDoesNotHang(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := newEnv(t)
	blocker := filepath.Join(e.home, "not-a-dir")
	require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o600))
	conf := filepath.Join(e.home, "daemon.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("state.savepoints.dir: "+filepath.Join(blocker, "savepoints")+"\n"), 0o600))
	e.startDaemon("--config", conf)
	out := filepath.Join(e.home, "out")
	const total = 20000
	id := e.mustRun("run", e.writeSpec("f.yaml", fmt.Sprintf(`
name: failing-shutdown-savepoint
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 5000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, total, out)))
	e.waitCheckpointCompleted(id)
	code, took := e.stopDaemon()
	log := e.stderr.String()
	require.Equal(t, 0, code, log)
	require.Contains(t, log, "shutdown savepoint failed")
	require.NotContains(t, log, "jobs did not stop in time")
	// The savepoint fails at once; before the fix SIGTERM waited for the
	// whole shutdown timeout (10s + 10s).
	require.Less(t, took, 5*time.Second, "SIGTERM took %s", took)

	e.startDaemon("--config", conf)
	info := e.waitState(id, api.StateFinished, 30*time.Second)
	require.Contains(t, info.RestoredFrom, filepath.Join(e.home, "checkpoints", id, "chk-"))
	requireExactly(t, out, total)
	scorecard.Record(t, start, scorecard.Entry{Suite: "shutdown savepoint that cannot be written, real binary",
		Faults: "SIGTERM with state.savepoints.dir under a regular file", Planned: 1, Fired: 1, Cases: 1, Records: total})
}

// waitCheckpointCompleted waits until job id completed a checkpoint.
func (e *env) waitCheckpointCompleted(id string) {
	e.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if info := e.info(id); info.Checkpoints != nil && info.Checkpoints.Completed > 0 {
			return
		}
		require.True(e.t, time.Now().Before(deadline), "no checkpoint completed")
	}
}
