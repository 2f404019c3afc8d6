package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// A bounded datagen → file job ends FINISHED with exactly its records in
// finished files; an unbounded one without checkpointing is refused.
func TestBoundedJobToFiles(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("f.yaml", fmt.Sprintf(`
name: to-files
parallelism: 3
operators:
  - {uid: gen, type: datagen, count: 30000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {maxPartSize: 64KiB}}
`, out)))
	e.waitState(id, api.StateFinished, 30*time.Second)
	requireExactly(t, out, 30000)

	r := e.run("run", e.writeSpec("u.yaml", fmt.Sprintf(`
name: unbounded
operators:
  - {uid: gen, type: datagen}
  - {uid: files, type: file, from: [gen], path: %s}
`, out)))
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "checkpointing")
}

// SIGTERM stops running jobs with a savepoint and leaves them SUSPENDED;
// the next daemon resumes them from that savepoint, and the output stays
// exactly-once.
func TestShutdownSuspendsAndResumes(t *testing.T) {
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("f.yaml", fmt.Sprintf(`
name: suspended
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, count: 20000, rate: 5000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, out)))
	e.waitCheckpoint(id) // mid-run: 20,000 records take 4 s
	code, took := e.stopDaemon()
	require.Equal(t, 0, code)
	require.Less(t, took, 5*time.Second)
	require.Contains(t, e.stderr.String(), "job stopped with a savepoint for shutdown")
	e.startDaemon()
	info := e.info(id)
	require.NotEqual(t, api.StateSuspended, info.State, "resumed at start")
	require.Contains(t, info.RestoredFrom, filepath.Join(e.home, "savepoints", "savepoint-"))
	e.waitState(id, api.StateFinished, 30*time.Second)
	requireExactly(t, out, 20000)

	// With --restore-on-start=false a suspended job stays suspended.
	id = e.mustRun("run", e.writeSpec("g.yaml", fmt.Sprintf(`
name: kept-suspended
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none}
`, filepath.Join(e.home, "out2"))))
	e.waitCheckpoint(id)
	code, _ = e.stopDaemon()
	require.Equal(t, 0, code)
	e.startDaemon("--restore-on-start=false")
	info = e.info(id)
	require.Equal(t, api.StateSuspended, info.State)
	require.Contains(t, info.RestorePoint, filepath.Join(e.home, "savepoints"))
}

// A chained job (filter and map on the source's goroutine) through the
// real binary: savepoint and cancel mid-run, restore unchained at another
// parallelism; the files hold every record exactly once.
// Sequential (no t.Parallel): the bounded job must still run when the
// savepoint is taken.
func TestChainedJobRestoresUnchained(t *testing.T) {
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	spec := func(par int, chaining bool) string {
		return fmt.Sprintf(`
name: chained-files
parallelism: %d
chaining: %v
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, count: 60000, rate: 20000}
  - {uid: all, type: filter, from: [gen], expr: "idx > 0"}
  - {uid: wide, type: map, from: [all], expr: "{idx: idx, twice: idx * 2}"}
  - {uid: files, type: file, from: [wide], path: %s, bucket: none}
`, par, chaining, out)
	}
	id := e.mustRun("run", e.writeSpec("chained.yaml", spec(2, true)))
	e.waitState(id, api.StateRunning, 10*time.Second)
	chained := map[string]string{}
	for _, op := range e.info(id).Operators {
		chained[op.UID] = op.ChainedTo
	}
	require.Equal(t, map[string]string{"gen": "", "all": "gen", "wide": "gen", "files": ""}, chained)
	// Mid-run: a checkpoint has committed part of the output.
	require.True(t, waitFor(10*time.Second, func() bool {
		info, err := e.jobInfo(id)
		return err == nil && info.Checkpoints != nil && info.Checkpoints.Completed > 0
	}), "no checkpoint")
	sp := e.mustRun("savepoint", id)
	e.mustRun("cancel", id)
	e.waitState(id, api.StateCanceled, 10*time.Second)
	id = e.mustRun("run", "-s", sp, e.writeSpec("unchained.yaml", spec(3, false)))
	e.waitState(id, api.StateFinished, 30*time.Second)
	requireExactly(t, out, 60000)
}
