package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

// startDaemon starts a daemon in process on a new FLINKGO_HOME, on its
// socket only, where the commands of the test find it; it is shut down at
// the test's end.
func startDaemon(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("FLINKGO_HOME", home)
	t.Setenv("FLINKGO_ADDRESS", "")
	t.Setenv(waitRunningEnv, "0")
	conf := filepath.Join(home, "flinkgo.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("rest.address: \"\"\n"), 0o600))
	cfg, err := config.Load(home, conf, nil)
	require.NoError(t, err)
	d, err := daemon.Start(daemon.Options{Config: cfg, Log: zerolog.Nop(), Registry: all.Registry()})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, d.Shutdown(ctx))
	})
	return home
}

// must runs a command that must succeed and returns its stdout.
func must(t *testing.T, args ...string) result {
	t.Helper()
	r := run(t, args...)
	require.Equal(t, 0, r.code, "flinkgo %v: %s", args, r.stderr)
	return r
}

// requireLines requires each pattern to match a whole line of text, in
// order.
func requireLines(t *testing.T, text string, patterns ...string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	i := 0
	for _, p := range patterns {
		re := regexp.MustCompile("^" + p + "$")
		for i < len(lines) && !re.MatchString(lines[i]) {
			i++
		}
		require.Less(t, i, len(lines), "no line matching %q (in order) in:\n%s", p, text)
		i++
	}
}

// The commands that talk to the daemon, on one job's life: what each
// prints for people (columns, the lines a script greps) and as -o json,
// and what it says on stderr.
func TestJobCommandsOutput(t *testing.T) {
	home := startDaemon(t)
	require.Equal(t, "no jobs\n", must(t, "list").stdout)

	spec := filepath.Join(home, "ticks.yaml")
	require.NoError(t, os.WriteFile(spec, []byte(`name: ticks
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, rate: 500}
  - {uid: out, type: discard, from: [gen]}
`), 0o600))
	r := must(t, "run", spec)
	id := strings.TrimSpace(r.stdout)
	require.Regexp(t, `^[0-9a-f]{6,}$`, id, "run prints the job id alone")

	requireLines(t, must(t, "list").stdout,
		`ID +NAME +STATE +SUBMITTED +RESTARTS`,
		id+` +ticks +RUNNING +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +0`)
	var jobs []api.JobInfo
	require.NoError(t, json.Unmarshal([]byte(must(t, "list", "-o", "json").stdout), &jobs))
	require.Len(t, jobs, 1)
	require.Equal(t, api.JobInfo{ID: id, Name: "ticks", State: api.StateRunning}, api.JobInfo{ID: jobs[0].ID, Name: jobs[0].Name, State: jobs[0].State})

	var cps api.CheckpointsInfo
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal([]byte(must(t, "checkpoints", id, "-o", "json").stdout), &cps))
		return cps.Counts.Completed > 0
	}, 30*time.Second, 20*time.Millisecond)
	requireLines(t, must(t, "checkpoints", id).stdout,
		`completed \d+, failed 0, in progress \d+`,
		`latest completed: \d+ at \S+ \(`+regexp.QuoteMeta(home)+`/\S+\)`,
		`ID +KIND +STATUS +TRIGGERED +DURATION +SIZE +FAILURE`,
		`\d+ +checkpoint +\S+ +\d\d:\d\d:\d\d\.\d{3} +\d+ms +\d+ *`)

	requireLines(t, must(t, "info", id).stdout,
		`id: +`+id,
		`name: +ticks`,
		`state: +RUNNING`,
		`restarts: +0 \(strategy \S+\)`,
		`checkpointing: +every 50ms, exactly-once, timeout \S+, \S+`,
		`checkpoints: +\d+ completed, 0 failed, \d+ in progress`,
		`latest checkpoint: +\d+, \d+ bytes, \d+ms, \S+`,
		`OPERATOR +TYPE +PARALLELISM +RECORDS IN +RECORDS OUT +BUSY +BACKPRESSURED +IDLE +METRICS`,
		`gen +datagen +1 +\d+ +\d+ +\d+% +\d+% +\d+% +.*`,
		`out +discard +1 +\d+ +\d+ +\d+% +\d+% +\d+% *`)

	r = must(t, "savepoint", id, filepath.Join(home, "sp"))
	sp := strings.TrimSpace(r.stdout)
	require.True(t, strings.HasPrefix(sp, filepath.Join(home, "sp", "savepoint-")), "savepoint prints the path alone: %q", r.stdout)
	requireLines(t, r.stderr, `triggering savepoint for job `+id+`\.\.\.`, `restore with: flinkgo run -s `+regexp.QuoteMeta(sp)+` `+regexp.QuoteMeta(spec))

	requireLines(t, must(t, "savepoint", "inspect", sp).stdout,
		`savepoint \d+ of job "ticks" \(`+id+`\)`,
		`path: +`+regexp.QuoteMeta(sp),
		`taken: +\S+ \(\S+ ago\)`,
		`max parallelism: +\d+`,
		`state size: +\d+ bytes`,
		`complete: +yes \(every state file present with its checksum\)`,
		`UID +TYPE +PARALLELISM +BYTES +KEYS +KEYS WITH TIMERS`,
		`gen +datagen +1 +\d+ +0 +0`)
	var in struct {
		Path, JobID, JobName, Kind string
		Complete                   bool
	}
	require.NoError(t, json.Unmarshal([]byte(must(t, "savepoint", "inspect", sp, "-o", "json").stdout), &in))
	require.Equal(t, struct {
		Path, JobID, JobName, Kind string
		Complete                   bool
	}{sp, id, "ticks", "savepoint", true}, in)

	requireLines(t, must(t, "run", "--dry-run", "-s", sp, spec).stdout,
		`restore from `+regexp.QuoteMeta(sp)+` \(savepoint \d+\)`,
		`  matched  gen +datagen +parallelism 1, \d+ bytes`,
		`the restore can go ahead`)

	r = must(t, "stop", id)
	stopped := strings.TrimSpace(r.stdout)
	require.DirExists(t, stopped)
	requireLines(t, r.stderr, `stopping job `+id+` with a savepoint\.\.\.`, `restore with: flinkgo run -s `+regexp.QuoteMeta(stopped)+` .*`)
	requireLines(t, must(t, "list").stdout, `ID +NAME .*`, id+` +ticks +FINISHED .*`)
	r = run(t, "cancel", id)
	require.Equal(t, 7, r.code, "cancel of an ended job is a conflict: %s", r.stderr)
	require.Contains(t, r.stderr, "error: ")

	r = must(t, "logs", id)
	require.Regexp(t, `(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+ +.*FINISHED`, r.stderr, "logs prints the job's events on stderr")

	require.Equal(t, "disposed "+sp+"\n", must(t, "savepoint", "dispose", sp).stdout)
	r = run(t, "savepoint", "inspect", sp)
	require.Equal(t, 4, r.code, "a disposed savepoint is not found: %s", r.stderr)
	var disposed map[string]string
	require.NoError(t, json.Unmarshal([]byte(must(t, "savepoint", "-d", stopped, "-o", "json").stdout), &disposed))
	require.Equal(t, map[string]string{"disposed": stopped}, disposed)

	r = run(t, "info", "nosuchjob")
	require.Equal(t, 4, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "error: "), r.stderr)
}

// A savepoint directory a crash left without _metadata: inspect describes
// it and fails (exit 3), dispose refuses it without --force and removes it
// with it; a directory that is no savepoint is refused even with --force.
func TestIncompleteSavepointInspectAndDispose(t *testing.T) {
	t.Setenv("FLINKGO_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "savepoint-3f2a1c-7-0a1b2c")
	require.NoError(t, os.CopyFS(dir, os.DirFS("../engine/testdata/oldsavepoint/savepoint")))
	require.NoError(t, os.Remove(filepath.Join(dir, "_metadata")))

	r := run(t, "savepoint", "inspect", dir)
	require.Equal(t, 3, r.code, r.stderr)
	requireLines(t, r.stdout, `path: +`+regexp.QuoteMeta(dir), `PROBLEM: .+`)
	require.Contains(t, r.stderr, "is not a usable savepoint")
	r = run(t, "savepoint", "inspect", dir, "-o", "json")
	var in struct {
		Complete, Incomplete bool
		Files                int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &in))
	require.Equal(t, struct {
		Complete, Incomplete bool
		Files                int
	}{false, true, 16}, in)

	r = run(t, "savepoint", "dispose", dir)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "refusing to dispose of "+dir+" without --force")
	require.DirExists(t, dir)
	require.Equal(t, "disposed "+dir+"\n", must(t, "savepoint", "dispose", "--force", dir).stdout)
	require.NoDirExists(t, dir)

	other := t.TempDir()
	r = run(t, "savepoint", "dispose", "--force", other)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "refusing to dispose of "+other)
	require.DirExists(t, other)
}
