package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// One output directory, one owner: every way a second job used
// to write into a directory another job writes, with the real binary. The
// newcomer is refused at submit, naming the owner; the original keeps
// running and its output stays exactly once.

func ownedSpec(name, out string) string {
	return fmt.Sprintf(`
name: %s
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, rate: 4000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, name, out)
}

// refusal is a submission the daemon must refuse.
type refusal struct {
	what string
	args []string
	want []string // in stderr
}

func TestOneOutputDirectoryOneOwner(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "outs", "a")
	spec := e.writeSpec("a.yaml", ownedSpec("owner", out))
	id := e.mustRun("run", spec)
	e.waitCommitted(id, out, 1)

	refused := 0
	refuse := func(r refusal) {
		t.Helper()
		res := e.run(r.args...)
		require.Equal(t, 7, res.code, "%s: %s%s", r.what, res.stdout, res.stderr)
		for _, w := range r.want {
			require.Contains(t, res.stderr, w, r.what)
		}
		require.Equal(t, api.StateRunning, e.info(id).State, "%s: the original job must keep running", r.what)
		refused++
	}
	refuse(refusal{"same path", []string{"run", e.writeSpec("b.yaml", ownedSpec("same", out))}, []string{id, "is " + out}})
	refuse(refusal{"a child directory", []string{"run", e.writeSpec("c.yaml", ownedSpec("child", filepath.Join(out, "sub")))}, []string{id, "is inside"}})
	refuse(refusal{"the parent directory", []string{"run", e.writeSpec("d.yaml", ownedSpec("parent", filepath.Join(e.home, "outs")))}, []string{id, "contains"}})

	// The same savepoint restored twice: refused while a job restored from
	// it (or the job that took it) runs.
	sp := e.mustRun("savepoint", id, filepath.Join(e.home, "sp"))
	refuse(refusal{"a restore while the savepoint's job runs", []string{"run", "-s", sp, spec}, []string{id}})
	e.mustRun("cancel", id)
	id = e.mustRun("run", "-s", sp, spec)
	e.waitCommitted(id, out, 1)
	refuse(refusal{"the same savepoint restored twice", []string{"run", "-s", sp, spec}, []string{id}})

	// Another daemon cannot ask this one, but finds the ownership marker.
	other := newEnv(t)
	other.startDaemon()
	res := other.run("run", other.writeSpec("e.yaml", ownedSpec("other-daemon", out)))
	require.Equal(t, 7, res.code, res.stderr)
	require.Contains(t, res.stderr, "belongs to job "+id)
	require.Contains(t, res.stderr, "not known to this daemon")
	res = other.run("run", "-s", sp, other.writeSpec("f.yaml", ownedSpec("other-daemon", out)))
	require.Equal(t, 7, res.code, "a restore of the savepoint in another daemon, while a job of this one owns the directory: %s", res.stderr)
	require.Contains(t, res.stderr, "belongs to job "+id)
	refused += 2
	require.Equal(t, api.StateRunning, e.info(id).State)

	stopped := e.mustRun("stop", id, "--savepoint-path", filepath.Join(e.home, "sp"))
	require.DirExists(t, stopped)
	final := committedOutput(t, out)
	require.Truef(t, final.OK() && final.First == 1 && final.Last == final.Records, "%d records, gaps %v, %d duplicates", final.Records, final.Gaps, final.Duplicates)

	// The job has ended: a new job (without -s) into its output is refused
	// all the same, unless allowed; a restore of its stop savepoint is not.
	res = e.run("run", e.writeSpec("g.yaml", ownedSpec("fresh", out)))
	require.Equal(t, 7, res.code, res.stderr)
	require.Contains(t, res.stderr, "--allow-non-empty-output")
	require.Contains(t, res.stderr, "is FINISHED in this daemon")
	res = e.run("run", e.writeSpec("h.yaml", ownedSpec("fresh", filepath.Join(e.home, "outs", "x"))))
	require.Equal(t, 0, res.code, "an empty directory: %s", res.stderr)
	e.mustRun("cancel", strings.TrimSpace(res.stdout))
	require.NoError(t, writeFile(filepath.Join(e.home, "outs", "y", "data.txt"), "someone's data\n"))
	res = e.run("run", e.writeSpec("i.yaml", ownedSpec("fresh", filepath.Join(e.home, "outs", "y"))))
	require.Equal(t, 7, res.code, "a directory with files and no marker: %s", res.stderr)
	require.Contains(t, res.stderr, "holds files but no job's ownership marker")
	refused += 2
	e.mustRun("run", "--dry-run", "--allow-non-empty-output", e.writeSpec("j.yaml", ownedSpec("fresh", out)))
	e.mustRun("run", "--dry-run", "-s", stopped, spec)
	require.Equal(t, final.Records, committedOutput(t, out).Records, "no refused job wrote anything")

	scorecard.Record(t, start, scorecard.Entry{Suite: "one output directory, one owner, real binary",
		Faults:  "second jobs into the same, a child and a parent directory, a savepoint restored twice, another daemon, a new job into ended output",
		Planned: 9, Fired: refused, Cases: refused, Records: final.Records, Lost: int64(len(final.Gaps)), Duplicated: final.Duplicates})
}

var requestIDHint = regexp.MustCompile(`--request-id ([0-9a-f]+)`)

// A kill of the daemon during `run -s` loses the CLI's answer although the
// job was created: the CLI retries with its request id, then says how to
// ask again; asked again with that id, the restarted daemon answers with
// the job it created instead of creating a second one.
func TestSubmitRetryReturnsTheSameJob(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	spec := e.writeSpec("a.yaml", ownedSpec("retried", out))
	first := e.mustRun("run", spec)
	e.waitCommitted(first, out, 1)
	sp := e.mustRun("stop", first, "--savepoint-path", filepath.Join(e.home, "sp"))
	e.stopDaemon()

	e.extra = []string{"FLINKGO_FAULTS=task.open:exit"}
	e.startDaemon()
	res := e.run("run", "-s", sp, spec)
	require.Equal(t, 5, res.code, "%s%s", res.stdout, res.stderr)
	m := requestIDHint.FindStringSubmatch(res.stderr)
	require.NotNil(t, m, "the error names the request id to retry with: %s", res.stderr)
	_, err := e.crash()
	require.ErrorContains(t, err, "exit status 137")

	e.extra = nil
	e.startDaemon()
	again := e.mustRun("run", "-s", sp, "--request-id", m[1], spec)
	var jobs []api.JobInfo
	require.NoError(t, json.Unmarshal([]byte(e.mustRun("list", "-a", "-o", "json")), &jobs))
	require.Len(t, jobs, 2, "the first job and the one restored from its savepoint: %+v", jobs)
	require.NotEqual(t, first, again)
	require.Equal(t, sp, e.info(again).RestoredFrom)
	// The id of another submission is refused, not reused.
	res = e.run("run", "--request-id", m[1], e.writeSpec("b.yaml", ownedSpec("other", filepath.Join(e.home, "other"))))
	require.Equal(t, 7, res.code, res.stderr)
	require.Contains(t, res.stderr, "was used for another submission")
	e.mustRun("stop", again, "--savepoint-path", filepath.Join(e.home, "sp"))
	r := committedOutput(t, out)
	require.Truef(t, r.OK() && r.First == 1, "gaps %v, %d duplicates", r.Gaps, r.Duplicates)
}

// writeFile writes data into path, creating its directory.
func writeFile(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(data), 0o600)
}

// Iterating on a job: an attempt that was canceled before it committed
// anything leaves only its marker, and the next attempt takes the directory
// without rm -rf or --allow-non-empty-output. Once the owner has committed
// a file, a new job is refused as before; while the owner runs, even its
// empty directory is refused.
func TestEndedJobThatCommittedNothingLeavesItsOutputFree(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	nothing := e.writeSpec("nothing.yaml", fmt.Sprintf(`
name: nothing
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: none, type: filter, from: [gen], expr: "false"}
  - {uid: files, type: file, from: [none], path: %s, bucket: none}
`, out))
	first := e.mustRun("run", nothing)
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(out, ".flinkgo-owner")); return err == nil }, 30*time.Second, 50*time.Millisecond)
	res := e.run("run", nothing)
	require.Equal(t, 7, res.code, "the owner still runs: %s%s", res.stdout, res.stderr)
	e.mustRun("cancel", first)
	second := e.mustRun("run", nothing)
	require.NotEqual(t, first, second)
	e.mustRun("cancel", second)

	third := e.mustRun("run", e.writeSpec("commits.yaml", ownedSpec("commits", out)))
	e.waitCommitted(third, out, 1)
	e.mustRun("cancel", third)
	res = e.run("run", nothing)
	require.Equal(t, 7, res.code, "the ended owner committed files: %s%s", res.stdout, res.stderr)
	require.Contains(t, res.stderr, "has ended but left files there")
}
