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

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// What a new user hit, each on the real binary.

const retainedSpec = `
name: retained
checkpointing: {interval: 100ms, externalized: RETAIN_ON_CANCELLATION}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: discard, from: [cnt]}
`

// stop without a directory writes where savepoint and the shutdown
// savepoints do; cancel names the command that restores the job with its
// own spec file (submitted by a relative path from another directory), and
// that command, pasted, works; run -s without a file says what is missing.
func TestRestoreCommandsNameTheJobFile(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	work := filepath.Join(e.home, "work")
	require.NoError(t, os.MkdirAll(work, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(work, "retained.yaml"), []byte(retainedSpec), 0o600))
	spec := filepath.Join(work, "retained.yaml")

	r := e.runIn(work, "run", "retained.yaml")
	require.Equal(t, 0, r.code, r.stderr)
	id := strings.TrimSpace(r.stdout)
	require.Equal(t, spec, e.info(id).File, "the daemon knows the spec file by its absolute path")
	e.waitCheckpoint(id)

	r = e.run("stop", id)
	require.Equal(t, 0, r.code, r.stderr)
	stopped := strings.TrimSpace(r.stdout)
	require.True(t, strings.HasPrefix(stopped, filepath.Join(e.home, "savepoints")+"/"), stopped)
	require.Contains(t, r.stderr, "restore with: flinkgo run -s "+stopped+" "+spec)

	id2 := e.mustRun("run", "-s", stopped, spec)
	e.waitCheckpoint(id2)
	sp := e.mustRun("savepoint", id2)
	r = e.run("cancel", id2)
	require.Equal(t, 0, r.code, r.stderr)
	for _, cmd := range regexp.MustCompile("`(flinkgo run -s [^`]+)`").FindAllStringSubmatch(r.stderr, -1) {
		require.True(t, strings.HasSuffix(cmd[1], " "+spec), "every restore command names the job's file: %s", cmd[1])
	}
	require.Contains(t, r.stderr, "`flinkgo run -s "+sp+" "+spec+"`")

	// The command as printed, pasted into a shell in another directory.
	line := "flinkgo run -s " + sp + " " + spec
	args := strings.Fields(strings.TrimPrefix(line, "flinkgo "))
	r = e.runIn(t.TempDir(), args...)
	require.Equal(t, 0, r.code, "%s: %s", line, r.stderr)
	id3 := strings.TrimSpace(r.stdout)
	require.Equal(t, sp, e.info(id3).RestoredFrom)
	e.mustRun("cancel", id3)

	r = e.run("run", "-s", sp)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "run -s "+sp+" needs the job's spec file too: flinkgo run -s "+sp+" JOB.yaml")
}

// waitCheckpoint waits for a job's first completed checkpoint.
func (e *env) waitCheckpoint(id string) {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		info, err := e.jobInfo(id)
		return err == nil && info.LatestCheckpoint != nil
	}, 20*time.Second, 20*time.Millisecond, "no checkpoint of %s: %s", id, e.stderr.String())
}

// waitCompleted waits until job id has completed n checkpoints.
func (e *env) waitCompleted(id string, n int) {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		info, err := e.jobInfo(id)
		return err == nil && info.Checkpoints != nil && info.Checkpoints.Completed >= n
	}, 20*time.Second, 20*time.Millisecond, "job %s did not complete %d checkpoints: %s", id, n, e.stderr.String())
}

// Exit codes as documented: a spec file that does not exist and an id
// prefix that names no job are "not found" (4), and so is an ambiguous
// prefix, which lists the jobs it matches.
func TestExitCodesNotFoundAndAmbiguous(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	missing := filepath.Join(e.home, "nonexist.yaml")
	for _, cmd := range []string{"run", "validate"} {
		r := e.run(cmd, missing)
		require.Equal(t, 4, r.code, "%s: %s", cmd, r.stderr)
		require.Contains(t, r.stderr, missing+" does not exist")
	}
	r := e.run("info", "ffffffffffffffff")
	require.Equal(t, 4, r.code, r.stderr)

	spec := e.writeSpec("one.yaml", "name: one\noperators:\n  - {uid: in, type: datagen, count: 1}\n  - {uid: out, type: discard, from: [in]}\n")
	byFirst := map[byte][]string{}
	var prefix string
	for prefix == "" {
		id := e.mustRun("run", spec)
		byFirst[id[0]] = append(byFirst[id[0]], id)
		if len(byFirst[id[0]]) == 2 {
			prefix = id[:1]
		}
		require.Less(t, len(byFirst), 17, "17 ids share a first hex digit")
	}
	r = e.run("info", prefix)
	require.Equal(t, 4, r.code, r.stderr)
	require.Contains(t, r.stderr, "ambiguous")
	for _, id := range byFirst[prefix[0]] {
		require.Contains(t, r.stderr, id, "the candidates are listed")
	}
	require.Equal(t, api.StateFinished, e.info(byFirst[prefix[0]][0]).State)
}

// -o json: every duration is milliseconds in a field ending in Ms, lists
// are [] rather than null, an error is JSON on stderr (with the exit code
// unchanged), and savepoint inspect prints for people, not Go syntax.
func TestJSONOutputConventions(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	spec := e.writeSpec("j.yaml", `
name: j
checkpointing: {interval: 2s, minPause: 150ms}
restartStrategy: {type: exponential-delay, initialBackoff: 250ms, maxBackoff: 5s}
operators:
  - {uid: in, type: datagen, rate: 100}
  - {uid: out, type: discard, from: [in]}
`)
	requireConventions(t, "list (no jobs)", e.mustRun("list", "-o", "json"))
	id := e.mustRun("run", spec)
	out := e.mustRun("info", id, "-o", "json")
	requireConventions(t, "info", out)
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &info))
	cp := info["checkpointing"].(map[string]any)
	require.Equal(t, 2000.0, cp["intervalMs"])
	require.Equal(t, 150.0, cp["minPauseMs"])
	rs := info["restartStrategy"].(map[string]any)
	require.Equal(t, 250.0, rs["initialBackoffMs"])
	require.Equal(t, 5000.0, rs["maxBackoffMs"])
	requireConventions(t, "checkpoints (none yet)", e.mustRun("checkpoints", id, "-o", "json"))
	requireConventions(t, "list", e.mustRun("list", "-o", "json"))
	requireConventions(t, "validate", e.mustRun("validate", spec, "-o", "json"))
	require.Contains(t, e.mustRun("validate", spec, "-o", "json"), `"errors": []`)

	r := e.run("info", "nope", "-o", "json")
	require.Equal(t, 4, r.code)
	require.Empty(t, r.stdout)
	var wire struct {
		Error    api.Error `json:"error"`
		ExitCode int       `json:"exitCode"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &wire), r.stderr)
	require.Equal(t, api.CodeNotFound, wire.Error.Code)
	require.Equal(t, 4, wire.ExitCode)
	require.Contains(t, wire.Error.Message, `"nope"`)

	bad := e.writeSpec("bad.yaml", "name: x\noperators:\n  - {uid: in, type: datagen, cuont: 1}\n")
	r = e.run("validate", bad, "-o", "json")
	require.Equal(t, 3, r.code)
	wire.Error = api.Error{}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &wire), r.stderr)
	require.Equal(t, api.CodeInvalid, wire.Error.Code)
	require.Len(t, wire.Error.Details, 3, "no sink, goes nowhere, cuont")
	r = e.run("info", "-o", "json")
	require.Equal(t, 2, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &wire), r.stderr)
	require.Equal(t, api.CodeUsage, wire.Error.Code)

	sp := e.mustRun("savepoint", id)
	text := e.mustRun("savepoint", "inspect", sp)
	require.NotContains(t, text, "map[", "no Go map syntax")
	require.Regexp(t, `in\[0\] nextIndexBySplit: 0: \d+`, text)
	e.mustRun("cancel", id)
}

// requireConventions fails on a null anywhere in a -o json output and on a
// number whose name says it is a duration but not in what unit.
func requireConventions(t *testing.T, what, out string) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(out), &v), "%s: %s", what, out)
	durationWords := regexp.MustCompile(`(?i)(interval|timeout|delay|backoff|pause|threshold|duration|uptime|lag)`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case nil:
			t.Errorf("%s: %s is null", what, path)
		case map[string]any:
			for k, x := range v {
				if _, num := x.(float64); num && durationWords.MatchString(k) && !strings.HasSuffix(k, "Ms") {
					t.Errorf("%s: %s.%s is a duration without its unit (want %sMs)", what, path, k, k)
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("", v)
}

// With the file sink's default rolling (60s) nothing is visible for a
// minute; flinkgo stop rolls the in-progress parts, so once it returns
// everything the sink received is in finished files.
func TestStopShowsTheFileSinkOutput(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("f.yaml", fmt.Sprintf(`
name: default-rolling
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 5000}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none}
`, out)))
	e.waitCheckpoint(id)
	e.waitCompleted(id, e.info(id).Checkpoints.Completed+2) // checkpoints commit nothing before the part rolls
	r := e.run("dev", "verify", "--path", out, "--field", "idx", "-o", "json")
	var before struct{ Records int64 }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &before), r.stdout+r.stderr)
	require.Zero(t, before.Records, "with 60s rolling nothing is visible yet")

	e.mustRun("stop", id)
	in := e.info(id).Operators[1].RecordsIn
	require.Positive(t, in)
	var after struct{ Records, First, Last, Duplicates int64 }
	require.NoError(t, json.Unmarshal([]byte(e.mustRun("dev", "verify", "--path", out, "--field", "idx", "-o", "json")), &after))
	require.Equal(t, in, after.Records, "everything before the stop is visible")
	require.Equal(t, int64(1), after.First)
	require.Equal(t, in, after.Last)
	require.Zero(t, after.Duplicates)
}

// Configuration errors found when a job starts fail it at once: run waits
// for the job to be RUNNING with every operator open, and exits 1 with the
// reason; no restart is spent (the default strategy with checkpointing
// restarts without limit).
func TestConfigurationErrorsFailAtStart(t *testing.T) {
	parallel(t)
	kb := broker(t, "flink-test", 1)
	ns, err := natsserver.Start(natsserver.Config{Listen: "127.0.0.1:0", Streams: []natsserver.Stream{{Name: "q", Subjects: []string{"q.in"}}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ns.Close() })
	e := newEnv(t)
	e.startDaemon()
	blocker := e.writeSpec("a-regular-file", "not a directory")
	for _, c := range []struct{ name, source, sink, want string }{
		{"misspelled kafka topic", fmt.Sprintf("{uid: in, type: kafka, brokers: [%s], topic: flink-tset, groupId: g}", kb.Addr()),
			"{uid: out, type: discard, from: [in]}", `topic "flink-tset" does not exist`},
		{"missing nats stream", fmt.Sprintf("{uid: in, type: nats, url: %q, stream: qq, mode: bookmark}", ns.URL()),
			"{uid: out, type: discard, from: [in]}", `stream "qq" does not exist`},
		{"missing kafka sink topic", "{uid: in, type: datagen, rate: 10}",
			fmt.Sprintf("{uid: out, type: kafka, from: [in], brokers: [%s], topic: nope}", kb.Addr()), `topic "nope" does not exist`},
		{"missing kafka exactly-once sink topic", "{uid: in, type: datagen, rate: 10}",
			fmt.Sprintf("{uid: out, type: kafka, from: [in], brokers: [%s], topic: nope, deliveryGuarantee: exactly-once}", kb.Addr()), `topic "nope" does not exist`},
	} {
		spec := e.writeSpec(strings.ReplaceAll(c.name, " ", "-")+".yaml", fmt.Sprintf("name: x\ncheckpointing: {interval: 1s}\noperators:\n  - %s\n  - %s\n", c.source, c.sink))
		start := time.Now()
		r := e.run("run", spec)
		require.Equal(t, 1, r.code, "%s: %s%s", c.name, r.stdout, r.stderr)
		require.Contains(t, r.stderr, "failed at start", c.name)
		require.Contains(t, r.stderr, c.want, c.name)
		require.Less(t, time.Since(start), 10*time.Second, c.name)
		id := strings.TrimSpace(r.stdout)
		info := e.info(id)
		require.Equal(t, api.StateFailed, info.State, c.name)
		require.Zero(t, info.Restarts, "%s: no restart spent on a configuration error", c.name)
	}
	spec := e.writeSpec("under-a-file.yaml", fmt.Sprintf("name: x\ncheckpointing: {interval: 1s}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: file, from: [in], path: %s}\n",
		filepath.Join(blocker, "out")))
	r := e.run("run", spec)
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "not a directory")
	require.Empty(t, r.stdout, "refused at submit: no job")
}

// A job that fails a moment after it started (a left join's select over
// an unmatched row, in a timer) makes run exit 1 with the error instead of
// 0; a healthy job exits 0 and run says how long it watched it.
func TestRunReportsAFailureJustAfterTheStart(t *testing.T) {
	e := newEnv(t)
	e.startDaemon()
	spec := func(sel string) string {
		return e.writeSpec("join-"+strings.Fields(sel)[0]+".yaml", fmt.Sprintf(`
name: left-join
checkpointing: {interval: 1s}
operators:
  - {uid: l, type: datagen, format: events, rate: 200, keys: 4, step: 10ms, eventTime: {maxOutOfOrderness: 0s}}
  - {uid: r, type: datagen, format: events, rate: 200, keys: 4, keyPrefix: v, step: 10ms, eventTime: {maxOutOfOrderness: 0s}}
  - uid: j
    type: intervalJoin
    left: {from: l, key: user}
    right: {from: r, key: user}
    lower: 0s
    upper: 20ms
    how: left
    select: {d: "%s"}
  - {uid: out, type: discard, from: [j]}
`, sel))
	}
	r := e.run("run", "--wait-running", "10s", spec("right.amount - left.amount"))
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.NotEmpty(t, strings.TrimSpace(r.stdout), "the job's id")
	require.Regexp(t, `job \S+ failed [0-9.]+m?s after it started and is restarting by its restart strategy: .*invalid operation: <nil> - int`, r.stderr)
	e.mustRun("cancel", strings.TrimSpace(r.stdout))

	r = e.run("run", "--wait-running", "1s", spec("left.amount"))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "is RUNNING: watched it for 1s, no failure")
}

// A record that fails again at the same position after a restart ends the
// job FAILED naming it, instead of restarting forever; onError: skip goes
// past it and counts it in info.
func TestPoisonRecordEndsTheJob(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	spec := func(onError string) string {
		return e.writeSpec("poison"+onError+".yaml", fmt.Sprintf(`
name: poison
checkpointing: {interval: 100ms}
operators:
  - {uid: in, type: datagen, count: 100, rate: 200}
  - {uid: f, type: filter, from: [in], expr: "idx != 50 || value.x == 1"%s}
  - {uid: out, type: discard, from: [f]}
`, onError))
	}
	id := e.mustRun("run", spec(""))
	info := e.waitState(id, api.StateFailed, 30*time.Second)
	require.Equal(t, 1, info.Restarts, "restarted once; the same record failed again")
	require.Contains(t, info.Error, "operator f failed on the same record again after a restart")
	require.Contains(t, info.Error, `(value "{\"idx\": 50}")`)
	require.Regexp(t, `record \d+ of subtask 0 (since the start|after checkpoint \d+)`, info.Error)

	id = e.mustRun("run", spec(", onError: skip"))
	info = e.waitState(id, api.StateFinished, 30*time.Second)
	require.Zero(t, info.Restarts)
	require.Equal(t, int64(1), info.Operators[1].Metrics["recordErrorsSkipped"])
	require.Equal(t, int64(99), info.Operators[2].RecordsIn)
	require.Contains(t, e.stderr.String(), "record failed and skipped (onError: skip)")
}
