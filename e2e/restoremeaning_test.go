package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/scorecard"
)

// savepointWithOpenWindows runs windowedSpec until its windows hold state,
// takes a savepoint and cancels the job: the savepoint's path and spec.
func savepointWithOpenWindows(t *testing.T, e *env) (string, string) {
	out := filepath.Join(e.home, "out")
	spec := windowedSpec(out, 1_000_000)
	id := e.mustRun("run", e.writeSpec("windowed.yaml", spec))
	waitOpenWindows(t, e, id)
	sp := e.mustRun("savepoint", id, filepath.Join(e.home, "sp"))
	e.mustRun("cancel", id)
	return sp, spec
}

// waitOpenWindows waits until the job's window operator has read records.
func waitOpenWindows(t *testing.T, e *env, id string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		info, err := e.jobInfo(id)
		if err != nil {
			continue
		}
		for _, op := range info.Operators {
			if op.UID == "win" && op.RecordsIn > 0 {
				return
			}
		}
	}
	t.Fatalf("the window read nothing in 30s: %s", e.stderr.String())
}

// A restore that changes what a window's state means (its size, its
// aggregates, the keyBy expression feeding it) is refused by run -s and
// by run --dry-run -s, naming the uid, the old and new value and the ways
// out, and creates no job; a renamed aggregate goes ahead, said to be safe.
func TestRestoreRefusesChangedMeaning(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	sp, spec := savepointWithOpenWindows(t, e)
	require.Contains(t, e.mustRun("savepoint", "inspect", sp), `win state (version 1): aggregate="count(), sum(amount)", aggregate.names="n, total", key="user"`)

	cases := []struct {
		name, old, new string
		want           []string
	}{
		{"size", "size: 1s", "size: 1m",
			[]string{`operator "win" has window.size "1s" in the snapshot and "1m0s" now`, "misaligned", `keep window.size "1s"`}},
		{"aggregate added", "total: sum(amount)}", "total: sum(amount), top: max(amount)}",
			[]string{`operator "win" has aggregate "count(), sum(amount)" in the snapshot and "count(), sum(amount), max(amount)" now`, "adding an aggregate is not supported"}},
		{"key", "expr: user}", "expr: 'user + \"-\"'}",
			[]string{`operator "win" has key "user" in the snapshot and "user + \"-\"" now`, "mix old and new keys"}},
	}
	before := e.mustRun("list", "-a", "-o", "json")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Contains(t, spec, c.old)
			changed := e.writeSpec("changed.yaml", strings.Replace(spec, c.old, c.new, 1))
			dry := e.run("run", "--dry-run", "-s", sp, changed)
			require.Equal(t, 3, dry.code, dry.stdout+dry.stderr)
			require.Contains(t, dry.stdout, "REFUSED  win")
			require.NotContains(t, dry.stdout, "the restore can go ahead")
			r := e.run("run", "-s", sp, changed)
			require.Equal(t, 3, r.code, r.stdout+r.stderr)
			for _, w := range append(c.want, "give the operator a new uid to start it empty", "--allow-non-restored-state") {
				require.Contains(t, dry.stderr, w)
				require.Contains(t, r.stderr, w)
			}
			require.Equal(t, before, e.mustRun("list", "-a", "-o", "json"), "a refused restore creates no job")
		})
	}

	renamed := e.writeSpec("renamed.yaml", strings.Replace(spec, "{n: count(), total: sum(amount)}", "{events: count(), total: sum(amount)}", 1))
	out := e.mustRun("run", "--dry-run", "-s", sp, renamed)
	require.Contains(t, out, `note: operator "win" has aggregate.names "n, total" in the snapshot and "events, total" now: safe`)
	require.Contains(t, out, "the restore can go ahead")
}

// A savepoint written before state meanings were recorded restores as
// before, with a warning that its state cannot be checked from it.
func TestRestoreOldSavepointWarnsUnchecked(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	sp := filepath.Join(e.home, "old")
	require.NoError(t, os.CopyFS(sp, os.DirFS("../internal/engine/testdata/oldsavepoint/savepoint")))
	spec, err := os.ReadFile("../internal/engine/testdata/oldsavepoint/job.yaml")
	require.NoError(t, err)
	out := e.mustRun("run", "--dry-run", "-s", sp, e.writeSpec("old.yaml", string(spec)))
	require.Contains(t, out, "note: the snapshot was written by a flinkgo that did not record what operator state means")
	require.Contains(t, out, "the restore can go ahead")
}

// stop --drain fires every window; run -s of its savepoint is refused
// (and --dry-run says so) and creates no job, unless --allow-drained, which
// restores it with the windows that fired kept fired: the output holds
// every window once.
func TestRestoreRefusesDrainedSavepoint(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	spec := e.writeSpec("windowed.yaml", windowedSpec(out, 1_000_000))
	id := e.mustRun("run", spec)
	waitOpenWindows(t, e, id)
	sp := e.mustRun("stop", "--drain", id, "--savepoint-path", filepath.Join(e.home, "sp"))
	require.Contains(t, e.mustRun("savepoint", "inspect", sp), "drained:         yes")
	drained := committedWindows(t, out)
	require.NotEmpty(t, drained, "the drain fired the open windows")

	before := e.mustRun("list", "-a", "-o", "json")
	for _, args := range [][]string{{"run", "-s", sp, spec}, {"run", "--dry-run", "-s", sp, spec}} {
		r := e.run(args...)
		require.Equal(t, 3, r.code, "%v: %s%s", args, r.stdout, r.stderr)
		require.Contains(t, r.stderr, "the savepoint was written by stop --drain")
		require.Contains(t, r.stderr, "fire the windows open at the drain a second time")
		require.Contains(t, r.stderr, "--allow-drained")
		require.NotContains(t, r.stdout, "the restore can go ahead")
	}
	require.Equal(t, before, e.mustRun("list", "-a", "-o", "json"), "a refused restore creates no job")

	r := e.run("run", "--allow-drained", "-s", sp, spec)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "warning: the savepoint was written by stop --drain and is taken as --allow-drained asks")
	restored := strings.TrimSpace(r.stdout)
	require.Equal(t, sp, e.info(restored).RestoredFrom)
	// committedWindows fails on a window committed twice: the drained
	// run's last windows must not fire again with the records after it.
	for deadline := time.Now().Add(60 * time.Second); len(committedWindows(t, out)) < len(drained)+22; time.Sleep(200 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the restored job committed no new windows: %s", e.stderr.String())
	}
	e.mustRun("cancel", restored)
	windows := committedWindows(t, out) // fails on a window committed twice
	scorecard.Record(t, start, scorecard.Entry{Suite: "drained savepoint: run -s refused, then --allow-drained (datagen events → window → file)",
		Faults: "1 stop --drain among open windows, restored", Planned: 1, Fired: 1, Cases: 1, Records: int64(len(windows)), Lost: 0, Duplicated: 0})
}
