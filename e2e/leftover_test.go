package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// onlySavepoint returns the one savepoint-* directory under dir.
func onlySavepoint(t *testing.T, dir string) string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, "savepoint-*"))
	require.NoError(t, err)
	require.Len(t, found, 1, "savepoints in %s", dir)
	return found[0]
}

// listed returns the daemon's listing entry for path.
func (e *env) listed(path string) *api.SavepointEntry {
	e.t.Helper()
	code, body := e.sockRequest(http.MethodGet, "/v1/savepoints", nil)
	require.Equal(e.t, http.StatusOK, code, body)
	var list []api.SavepointEntry
	require.NoError(e.t, json.Unmarshal([]byte(body), &list))
	for i := range list {
		if list[i].Path == path {
			return &list[i]
		}
	}
	return nil
}

// A crash while a savepoint is written leaves a directory of state files
// without _metadata: inspect and the dashboard's listing call it
// incomplete and say how to remove it, dispose refuses it without --force
// and removes it with.
func TestCrashedSavepointLeavesAnIncompleteDirectory(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := newEnv(t)
	sp := filepath.Join(e.home, "sp")
	e.extra = []string{"FLINKGO_FAULTS=checkpoint.publish-metadata:exit,nth=1"}
	e.startDaemon("--savepoints-dir", sp)
	// No periodic checkpoint before the savepoint: the first _metadata
	// published (nth=1) must be the savepoint's.
	spec := strings.Replace(statefulSpec, "interval: 100ms", "interval: 1h", 1)
	id := e.mustRun("run", e.writeSpec("s.yaml", spec))
	r := e.run("savepoint", id)
	require.Equal(t, 5, r.code, "the daemon exits before the savepoint's _metadata: %s%s", r.stdout, r.stderr)
	_, _ = e.crash()
	dir := onlySavepoint(t, sp)
	_, err := os.Stat(filepath.Join(dir, checkpoint.MetadataFile))
	require.ErrorIs(t, err, os.ErrNotExist)

	e.extra = nil
	e.startDaemon("--savepoints-dir", sp)
	r = e.run("savepoint", "inspect", dir)
	require.Equal(t, 3, r.code, "%s%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "incomplete: no _metadata (a crash during a savepoint or a stop left it)")
	entry := e.listed(dir)
	require.NotNil(t, entry, "the dashboard lists it")
	require.False(t, entry.Complete)
	require.Contains(t, entry.Problem, "flinkgo savepoint dispose --force "+dir)
	r = e.run("savepoint", "dispose", dir)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "without --force")
	require.DirExists(t, dir)
	e.mustRun("savepoint", "dispose", "--force", dir)
	require.NoDirExists(t, dir)
	require.Nil(t, e.listed(dir))
	scorecard.Record(t, start, scorecard.Entry{Suite: "crash inside a savepoint, real binary (incomplete directory)",
		Faults: "checkpoint.publish-metadata:exit in a savepoint; listed, refused, removed with dispose --force", Planned: 1, Fired: 1, Cases: 1})
}

// A crash after a stop savepoint's _metadata is published but before the
// job recorded the stop leaves a complete-looking savepoint whose commit
// never happened. The restarted daemon resumes the job from its latest
// checkpoint and abandons that savepoint (its _metadata renamed), so
// neither run -s nor the listing takes it for one; the output stays
// exactly once.
func TestCrashedStopLeavesAnAbandonedSavepoint(t *testing.T) {
	parallel(t)
	start := time.Now()
	const total = 20000
	e := newEnv(t)
	sp := filepath.Join(e.home, "sp")
	const point = "checkpoint.metadata-published"
	e.extra = []string{"FLINKGO_FAULTS=" + point + ":exit,match=stop-with-savepoint"}
	e.startDaemon("--savepoints-dir", sp)
	out := filepath.Join(e.home, "out")
	spec := e.writeSpec("f.yaml", fmt.Sprintf(`
name: abandoned-stop
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 4000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, total, out))
	id := e.mustRun("run", spec)
	e.waitCheckpointCompleted(id)
	r := e.run("stop", id)
	require.Equal(t, 5, r.code, "the daemon exits after the stop's _metadata: %s%s", r.stdout, r.stderr)
	require.Contains(t, e.stderr.String(), "injected fault: checkpoint.metadata-published exit")
	_, _ = e.crash()
	dir := onlySavepoint(t, sp)
	_, _, err := checkpoint.Load(vfs.Default, dir)
	require.NoError(t, err, "before the restart the stop savepoint looks complete")

	e.extra = nil
	e.startDaemon("--savepoints-dir", sp)
	info := e.waitState(id, api.StateFinished, 30*time.Second)
	require.Contains(t, info.RestoredFrom, filepath.Join(e.home, "checkpoints", id, "chk-"))
	require.Contains(t, e.stderr.String(), "stop savepoint abandoned")
	requireExactly(t, out, total)

	require.FileExists(t, filepath.Join(dir, checkpoint.AbandonedFile))
	r = e.run("savepoint", "inspect", dir)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stdout, "abandoned: the stop that wrote it did not commit")
	r = e.run("run", "-s", dir, spec)
	require.NotEqual(t, 0, r.code, "a restore from the abandoned savepoint: %s", r.stdout)
	require.Contains(t, r.stderr, "abandoned")
	entry := e.listed(dir)
	require.NotNil(t, entry)
	require.False(t, entry.Complete)
	require.Contains(t, entry.Problem, "abandoned")
	e.mustRun("savepoint", "dispose", "--force", dir)
	require.NoDirExists(t, dir)
	scorecard.Record(t, start, scorecard.Entry{Suite: "crash inside stop-with-savepoint before it is recorded, real binary",
		Faults:  "checkpoint.metadata-published:exit in the stop; the stop savepoint abandoned, the job resumed from its checkpoint",
		Planned: 1, Fired: 1, Cases: 1, Records: total})
}
