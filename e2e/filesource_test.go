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

// The file source through the real binary: a directory of JSON lines read
// at parallelism 2 (slowed by a delay at every poll) into the file sink,
// the daemon killed with SIGKILL after a checkpoint; the restarted daemon
// restores the job, which finishes with every record once.
func TestFileSourceKill9(t *testing.T) {
	parallel(t)
	const files, per = 6, 10_000
	e := newEnv(t)
	in := filepath.Join(e.home, "in")
	require.NoError(t, os.MkdirAll(in, 0o755))
	for f := range files {
		var b strings.Builder
		for i := range per {
			fmt.Fprintf(&b, "{\"idx\":%d}\n", f*per+i+1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.jsonl", f)), []byte(b.String()), 0o644))
	}
	e.extra = []string{"FLINKGO_FAULTS=file.read:delay,every=1,times=1000000,delay=20ms"}
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("fs.yaml", fmt.Sprintf(`
name: files-to-files
parallelism: 2
checkpointing: {interval: 100ms}
operators:
  - {uid: in, type: file, path: %s, format: json}
  - {uid: files, type: file, from: [in], path: %s, bucket: none, rolling: {maxPartSize: 64KiB}}
`, in, out)))
	deadline := time.Now().Add(30 * time.Second)
	for {
		info := e.info(id)
		require.False(t, info.State.Terminal(), "the kill must hit a running job: %+v", info)
		if info.Checkpoints != nil && info.Checkpoints.Completed >= 1 && info.State == api.StateRunning {
			break
		}
		require.True(t, time.Now().Before(deadline), "no checkpoint: %+v", info)
		time.Sleep(20 * time.Millisecond)
	}
	e.killDaemon()
	e.extra = nil
	e.startDaemon()
	info := e.waitState(id, api.StateFinished, 30*time.Second)
	require.NotEmpty(t, info.RestoredFrom, "restored from its checkpoint")
	requireExactly(t, out, files*per)
}
