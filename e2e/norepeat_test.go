package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// The two ways a daemon restart used to repeat committed output:
// a recorded checkpoint that became unreadable, and a registry that could
// not be written while checkpoints went on committing. Each test measures
// the output with the checker behind `flinkgo dev verify`.

const noRepeatRecords = 40_000

func noRepeatSpec(out string) string {
	return fmt.Sprintf(`
name: no-repeat
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 200ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 8000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, noRepeatRecords, out)
}

// committedOutput checks the finished files of out.
func committedOutput(t *testing.T, out string) *verify.Report {
	t.Helper()
	r, err := verify.Run(verify.Options{Path: out, Field: "idx"})
	require.NoError(t, err)
	return r
}

// waitCommitted waits until a checkpoint of job id completed and committed
// some output.
func (e *env) waitCommitted(id, out string, checkpoints int) {
	e.t.Helper()
	require.True(e.t, waitFor(30*time.Second, func() bool {
		info, err := e.jobInfo(id)
		if err != nil || info.Checkpoints == nil || info.Checkpoints.Completed < checkpoints {
			return false
		}
		r, err := verify.Run(verify.Options{Path: out, Field: "idx"})
		return err == nil && r.Records > 0
	}), "no checkpoint committed output: %s", e.stderr.String())
}

// waitSettled waits until job id is terminal (or FAILED), returning its info.
func (e *env) waitSettled(id string, timeout time.Duration) api.JobInfo {
	e.t.Helper()
	var info *api.JobInfo
	require.True(e.t, waitFor(timeout, func() bool {
		var err error
		info, err = e.jobInfo(id)
		return err == nil && info.State.Terminal()
	}), "job %s did not end: %+v\n%s", id, info, e.stderr.String())
	return *info
}

// checkpointDirs lists the chk-<n> directories of a job, oldest first.
func checkpointDirs(t *testing.T, home, id string) []string {
	entries, err := os.ReadDir(filepath.Join(home, "checkpoints", id))
	require.NoError(t, err)
	var ids []int
	for _, en := range entries {
		if n, err := strconv.Atoi(strings.TrimPrefix(en.Name(), "chk-")); err == nil {
			ids = append(ids, n)
		}
	}
	sort.Ints(ids)
	var out []string
	for _, n := range ids {
		out = append(out, filepath.Join(home, "checkpoints", id, "chk-"+strconv.Itoa(n)))
	}
	return out
}

// The recorded checkpoint's _metadata is unreadable after a kill -9: the
// job has committed output, so it must not start over (which repeated
// every committed record); it is FAILED with the reason and what to do, and
// the checkpoint is kept. Repaired, it restores with run -s, exactly once.
func TestUnreadableRestorePointIsNotStartedOver(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	spec := e.writeSpec("j.yaml", noRepeatSpec(out))
	id := e.mustRun("run", spec)
	e.waitCommitted(id, out, 1)
	e.killDaemon()

	committed := committedOutput(t, out)
	var chk string
	for _, d := range checkpointDirs(t, e.home, id) {
		if _, err := os.Stat(filepath.Join(d, "_metadata")); err == nil {
			chk = d // the newest complete one: retained 1 keeps only it
		}
	}
	require.NotEmpty(t, chk, "no complete checkpoint on disk")
	meta := filepath.Join(chk, "_metadata")
	good, err := os.ReadFile(meta)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(meta, []byte("not a flinkgo _metadata"), 0o600))

	e.startDaemon()
	info := e.waitSettled(id, 60*time.Second)
	after := committedOutput(t, out)
	t.Logf("committed before the kill: %d records (..%d); after the restart: %d records, %d duplicated, job %s: %s",
		committed.Records, committed.Last, after.Records, after.Duplicates, info.State, info.Error)
	require.Zero(t, after.Duplicates, "the restart repeated committed output")
	require.Equal(t, api.StateFailed, info.State)
	require.Contains(t, info.Error, chk)
	require.Contains(t, info.Error, "flinkgo run -s")
	require.DirExists(t, chk, "the unreadable restore point was deleted")
	require.Equal(t, committed.Records, after.Records)

	// Repaired, the checkpoint restores by hand and the job ends exactly once.
	require.NoError(t, os.WriteFile(meta, good, 0o600))
	id2 := e.mustRun("run", "-s", chk, spec)
	e.waitState(id2, api.StateFinished, 60*time.Second)
	final := committedOutput(t, out)
	requireExactly(t, out, noRepeatRecords)
	scorecard.Record(t, start, scorecard.Entry{Suite: "unreadable restore point after kill -9, real binary",
		Faults: "kill -9, then the recorded checkpoint's _metadata overwritten", Planned: 1, Fired: 1, Cases: 1,
		Records: final.Records, Lost: int64(noRepeatRecords) - final.Records + final.Duplicates, Duplicated: final.Duplicates})
}

// breakRegistry makes the job's registry file unwritable the way a full or
// failing disk would, even for root: job.json becomes a non-empty
// directory, so the atomic rename onto it fails. The last record written is
// kept aside (the loop takes it again if the daemon wrote a newer one in
// between) and put back by the returned function.
func breakRegistry(t *testing.T, home, id string) (restore func()) {
	dir := filepath.Join(home, "jobs", id)
	file, saved := filepath.Join(dir, "job.json"), filepath.Join(home, "job.json.saved")
	require.True(t, waitFor(5*time.Second, func() bool {
		if err := os.Rename(file, saved); err != nil && !os.IsNotExist(err) {
			t.Fatalf("move job.json aside: %v", err)
		}
		return os.Mkdir(file, 0o700) == nil
	}), "could not replace job.json")
	require.NoError(t, os.WriteFile(filepath.Join(file, "blocker"), nil, 0o600))
	return func() {
		require.NoError(t, os.RemoveAll(file))
		require.NoError(t, os.Rename(saved, file))
	}
}

// registryOutage runs a job, makes its registry unwritable while
// checkpoints go on in another directory, ends the daemon (kill -9 or
// SIGTERM), puts the last registry record back and restarts: the output
// must hold every record exactly once.
func registryOutage(t *testing.T, sigterm bool) *verify.Report {
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("j.yaml", noRepeatSpec(out)))
	e.waitCommitted(id, out, 2)
	restore := breakRegistry(t, e.home, id)
	// A checkpoint recorded just before the break may still be committing.
	time.Sleep(300 * time.Millisecond)
	before := committedOutput(t, out)
	time.Sleep(1500 * time.Millisecond) // several checkpoint intervals
	during := committedOutput(t, out)
	t.Logf("committed when the registry broke: %d records; %.1fs later: %d", before.Records, 1.5, during.Records)
	require.Contains(t, e.stderr.String(), "as the job's restore point", "no checkpoint failed on the registry")
	require.Equal(t, before.Records, during.Records, "checkpoints committed output the registry could not record")
	if sigterm {
		// The shutdown savepoint fails (it cannot be recorded) and the
		// job is suspended without one.
		e.stopDaemon()
	} else {
		e.killDaemon()
	}
	restore()
	e.startDaemon()
	info := e.waitSettled(id, 90*time.Second)
	r := committedOutput(t, out)
	t.Logf("after the restart: job %s (%s), %d records, %d duplicated, gaps %v", info.State, info.Error, r.Records, r.Duplicates, r.Gaps)
	requireNoPanic(t, "daemon log", e.stderr.String())
	require.Zero(t, r.Duplicates, "the restart repeated committed output (e.g. %v)", r.DuplicateSamples)
	require.Equal(t, api.StateFinished, info.State, info.Error)
	requireExactly(t, out, noRepeatRecords)
	return r
}

// A registry that cannot be written fails the checkpoints instead of
// letting them commit past it: after a kill -9, or a SIGTERM (whose
// shutdown savepoint cannot be recorded either, so it fails too), the job
// resumes from the last restore point the registry holds, exactly once.
func TestRegistryOutageThenRestart(t *testing.T) {
	parallel(t)
	start := time.Now()
	var records, dups int64
	for _, sigterm := range []bool{false, true} {
		t.Run(map[bool]string{false: "kill", true: "sigterm"}[sigterm], func(t *testing.T) {
			r := registryOutage(t, sigterm)
			records += r.Records
			dups += r.Duplicates
		})
	}
	scorecard.Record(t, start, scorecard.Entry{Suite: "registry unwritable, then kill -9 or SIGTERM, real binary",
		Faults: "job.json unwritable while checkpoints go on; kill -9, SIGTERM", Planned: 2, Fired: 2, Cases: 2,
		Records: records, Duplicated: dups})
}

// A registry file of version 1 (before the recovery record) is resumed
// after an upgrade: a daemon crashed with the older format, the new one
// resumes the job from its restore point, exactly once, and writes version 2.
func TestRegistryVersion1IsResumed(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("j.yaml", noRepeatSpec(out)))
	e.waitCommitted(id, out, 2)
	e.killDaemon()

	// Rewrite job.json as version 1 wrote it: the restore point only in the
	// display info, no recovery record.
	path := filepath.Join(e.home, "jobs", id, "job.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(data, &rec))
	rp := rec["recovery"].(map[string]any)["restorePoint"].(map[string]any)
	info := rec["info"].(map[string]any)
	info["restorePoint"], info["restorePointId"] = rp["dir"], rp["id"]
	delete(rec, "recovery")
	rec["version"] = 1
	data, err = json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))

	e.startDaemon()
	e.waitState(id, api.StateFinished, 60*time.Second)
	requireExactly(t, out, noRepeatRecords)
	require.Contains(t, e.stderr.String(), "resuming job after daemon restart")
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"version": 2`)
}
