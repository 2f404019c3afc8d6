package file

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

const eoRecords = 40000 // 4 subtasks × 10,000

// eoSpec is the job of the exactly-once tests: sequence numbers from a
// parallel datagen, optionally through a failing operator, into the file
// sink with per-second buckets and small parts (so both rolled and
// resumed in-progress parts cross checkpoints).
func eoSpec(dir, extraOp, sinkOpts string) string {
	from := "gen"
	if extraOp != "" {
		from = "fail"
		extraOp = "\n  - {uid: fail, type: test-fail, from: [gen], " + extraOp + "}"
	}
	return fmt.Sprintf(`
name: file-exactly-once
parallelism: 4
checkpointing: {interval: 50ms}
restartStrategy: {type: fixed-delay, attempts: 40, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 16000}%s
  - {uid: out, type: file, from: [%s], path: %q, bucket: "yyyy-MM-dd--HH-mm-ss", %s}
`, eoRecords, extraOp, from, dir, sinkOpts)
}

func TestExactlyOnceUnderFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		rules []*faultRule
		fail  string // test-fail options
		sink  string
	}{
		{name: "after-commit", rules: []*faultRule{{point: "file.commit-done", every: 6, times: 3}},
			sink: "rolling: {maxPartSize: 4KiB}"},
		{name: "during-commit", rules: []*faultRule{{point: "file.commit", every: 13, times: 3}},
			sink: "rolling: {maxPartSize: 4KiB}"},
		{name: "between-precommit-and-commit", rules: []*faultRule{{point: "task.notify-complete", uid: "out", every: 9, times: 3}},
			sink: "rolling: {maxPartSize: 4KiB, onCheckpoint: true}"},
		{name: "in-precommit", rules: []*faultRule{{point: "file.precommit", every: 17, times: 2}},
			sink: "rolling: {maxPartSize: 4KiB}"},
		{name: "process-and-restore", rules: []*faultRule{{point: "file.restore", every: 3, times: 1}},
			fail: "every: 2500, times: 3", sink: "rolling: {maxPartSize: 2KiB}, partPrefix: data, partSuffix: .jsonl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			hook := &faultHook{rules: c.rules}
			failName := ""
			if c.fail != "" {
				failName = fmt.Sprintf("file-eo-%s-%d", c.name, time.Now().UnixNano())
				c.fail = "name: " + failName + ", " + c.fail
			}
			j := runtimetest.Start(t, eoSpec(dir, c.fail, c.sink), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: hook})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			for _, r := range c.rules {
				require.Equal(t, r.times, hook.fired()[r.point], "fault %s fired", r.point)
			}
			if failName != "" {
				require.Equal(t, int64(3), runtimetest.Fired(failName))
			}
			require.GreaterOrEqual(t, j.Info().Restarts, 1)
			r := requireExactlyOnce(t, dir, nil, eoRecords)
			t.Logf("%s: faults fired %v (test-fail %d), restarts %d, %d finished files, %d records exactly once",
				c.name, hook.fired(), runtimetest.Fired(failName), j.Info().Restarts, r.Files, r.Records)
		})
	}
}

// A disk that fills up while writing a part file fails the job over; the
// restored job writes everything exactly once.
func TestExactlyOnceDiskFull(t *testing.T) {
	dir := t.TempDir()
	inj := vfs.OnNth(40, func(op vfs.Op) bool {
		return op.Kind == vfs.OpWrite && strings.Contains(op.Path, ".inprogress.")
	}, vfs.ErrNoSpace)
	j := runtimetest.Start(t, eoSpec(dir, "", "rolling: {maxPartSize: 4KiB}"),
		runtimetest.Options{Types: testTypes, FS: vfs.WithFaults(vfs.Default, inj), CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	require.True(t, inj.Fired())
	require.GreaterOrEqual(t, j.Info().Restarts, 1)
	requireExactlyOnce(t, dir, nil, eoRecords)
}

// The sequence from the Flink savepoint blog post, with its pitfall:
// savepoint, then a checkpoint completes (and
// commits output written after the savepoint), then cancel and run -s.
// The restored job deletes what was committed after the savepoint.
func TestSavepointCheckpointCancelRestore(t *testing.T) {
	dir, chk, sp := t.TempDir(), t.TempDir(), t.TempDir()
	spec := func(rate int) string {
		return fmt.Sprintf(`
name: blog
parallelism: 2
checkpointing: {interval: 30ms, externalized: retain-on-cancellation}
operators:
  - {uid: gen, type: datagen, count: %d, rate: %d}
  - {uid: out, type: file, from: [gen], path: %q, bucket: "yyyy-MM-dd--HH-mm", rolling: {maxPartSize: 1KiB}}
`, 20000, rate, dir)
	}
	j := runtimetest.Start(t, spec(8000), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, SavepointsDir: sp})
	waitCheckpoint(t, j, 2)
	path, spID, err := j.Savepoint("")
	require.NoError(t, err)
	// A checkpoint after the savepoint commits files the savepoint does
	// not know: wait until there is one.
	var after int
	require.Eventually(t, func() bool {
		after = committedAfter(t, dir, path)
		return after > 0
	}, 20*time.Second, 10*time.Millisecond)
	before := requireFinishedFiles(t, dir)
	require.NoError(t, j.Cancel())
	require.Equal(t, api.StateCanceled, runtimetest.Wait(t, j, 10*time.Second))

	j2 := runtimetest.Start(t, spec(0), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, Restore: path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j2, 30*time.Second), j2.Info().Error)
	r := requireExactlyOnce(t, dir, nil, 20000)
	t.Logf("savepoint %d; before cancel %d finished files, %d of them committed after the savepoint; after run -s: %d files, %d records exactly once",
		spID, before, after, r.Files, r.Records)
}

// Stop with a savepoint, restore at parallelism 2, stop again, restore
// at 4: part numbers never collide and every record is there once.
func TestStopWithSavepointAndRescale(t *testing.T) {
	dir, chk, sp := t.TempDir(), t.TempDir(), t.TempDir()
	spec := func(par, rate int) string {
		return fmt.Sprintf(`
name: rescale
checkpointing: {interval: 40ms}
operators:
  - {uid: gen, type: datagen, count: 30000, rate: %d, parallelism: 4}
  - {uid: out, type: file, from: [gen], parallelism: %d, path: %q, bucket: none, rolling: {maxPartSize: 2KiB}}
`, rate, par, dir)
	}
	restore := ""
	for i, par := range []int{4, 2, 3} {
		j := runtimetest.Start(t, spec(par, 10000), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, SavepointsDir: sp, Restore: restore})
		waitCheckpoint(t, j, 1)
		path, _, err := j.Stop("", false)
		require.NoError(t, err, "stop %d", i)
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
		restore = path
	}
	j := runtimetest.Start(t, spec(4, 0), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, Restore: restore})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	requireExactlyOnce(t, dir, nil, 30000)
}

func TestBoundedJobWithoutCheckpointingCommitsAtTheEnd(t *testing.T) {
	dir := t.TempDir()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: bounded
parallelism: 3
operators:
  - {uid: gen, type: datagen, count: 5000}
  - {uid: out, type: file, from: [gen], path: %q, bucket: none, format: json}
`, dir), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	files, err := filepath.Glob(filepath.Join(dir, "part-*"))
	require.NoError(t, err)
	require.Len(t, files, 3, "one finished part per subtask: %v", files)
	hidden, err := filepath.Glob(filepath.Join(dir, ".*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, runtime.OwnerFile)}, hidden, "no hidden part file is left; the ownership marker stays")
	lines := 0
	for _, f := range files {
		data, err := vfs.ReadFile(vfs.Default, f)
		require.NoError(t, err)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			require.Regexp(t, `^\{"value":\{"idx": \d+\},"key":null,"timestamp":\d+\}$`, l)
			lines++
		}
	}
	require.Equal(t, 5000, lines)
}

func waitCheckpoint(t *testing.T, j *engine.Job, atLeast int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c := j.LatestCheckpoint(); c != nil && c.ID >= atLeast {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no checkpoint >= %d completed (state %s, %s)", atLeast, j.State(), j.Info().Error)
}

// committedAfter counts the finished parts in dir numbered at or past the
// part counter the snapshot at spPath recorded for their subtask index.
func committedAfter(t *testing.T, dir, spPath string) int {
	t.Helper()
	r, err := engine.LoadRestore(vfs.Default, spPath)
	require.NoError(t, err)
	next := map[int]int64{}
	for _, h := range r.Meta.Operator("out").Subtasks {
		next[h.Subtask] = int64(h.Details["nextPart"].(float64))
	}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		idx, part, hidden, ok := naming{Prefix: "part"}.Parse(d.Name())
		if ok && !hidden && part >= next[idx] {
			n++
		}
		return nil
	})
	require.NoError(t, err)
	return n
}

func requireFinishedFiles(t *testing.T, dir string) int {
	t.Helper()
	r, err := verifyRun(dir)
	require.NoError(t, err)
	require.NotZero(t, r.Files)
	return r.Files
}

// A stop-with-savepoint rolls the in-progress part files, so everything the
// sink received before `flinkgo stop` is in finished files once the stop
// returns, even with the default rolling (60s) that would keep it hidden;
// the job restored from the stop savepoint starts new part files and the
// output stays exactly once.
func TestStopMakesEverythingVisible(t *testing.T) {
	dir, chk, sp := t.TempDir(), t.TempDir(), t.TempDir()
	spec := func(count int) string {
		return fmt.Sprintf(`
name: stop-visible
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 20000, parallelism: 2}
  - {uid: out, type: file, from: [gen], parallelism: 2, path: %q, bucket: none}
`, count, dir)
	}
	j := runtimetest.Start(t, spec(1_000_000), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, SavepointsDir: sp})
	waitCheckpoint(t, j, 2)
	path, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
	in := j.Info().Operators[1].RecordsIn
	require.Positive(t, in)
	r, err := verifyRun(dir)
	require.NoError(t, err)
	require.Zero(t, r.Duplicates, "%+v", r)
	require.Equal(t, in, r.Records, "every record the sink received before the stop is in a finished file: %+v", r)
	hidden, err := filepath.Glob(filepath.Join(dir, ".part-*"))
	require.NoError(t, err)
	require.Empty(t, hidden, "no in-progress part is left behind the stop")
	first, err := filepath.Glob(filepath.Join(dir, "part-*"))
	require.NoError(t, err)

	j2 := runtimetest.Start(t, spec(int(in)+5000), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, Restore: path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j2, 30*time.Second), j2.Info().Error)
	all, err := filepath.Glob(filepath.Join(dir, "part-*"))
	require.NoError(t, err)
	for _, f := range first {
		require.Contains(t, all, f, "the restored job does not reopen the stop's parts")
	}
	require.Greater(t, len(all), len(first), "the restored job wrote new part files")
	requireExactlyOnce(t, dir, nil, in+5000)
}
