package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// countingSpec is keyedSpec with 50ms checkpoints.
// waitRead waits until job j's source (its first operator) has emitted n
// records in this run: a stop or savepoint after it lands mid-input with
// state to write, however fast or loaded the machine (a fixed sleep lands
// before the first record on one and after the last on another).
func waitRead(t *testing.T, j *engine.Job, n int64) {
	t.Helper()
	runtimetest.WaitUntil(t, 30*time.Second, fmt.Sprintf("%d records read", n), func() bool {
		ops := j.Info().Operators
		return len(ops) > 0 && ops[0].RecordsOut >= n
	})
}

func countingSpec(name string, par, count int) string {
	return "checkpointing: {interval: 50ms}\n" + keyedSpec(name, par, count)
}

// Stop with a savepoint, then restore at 3, then at 1 subtasks: keyed state
// is redistributed by key group and source positions by split, so the
// final counts cover every record exactly once.
func TestStopRestoreRescale(t *testing.T) {
	const total = 60000
	name := fmt.Sprintf("rescale-%d", time.Now().UnixNano())
	spDir := t.TempDir()
	path := ""
	for i, par := range []int{2, 3, 1} {
		j := runtimetest.Start(t, countingSpec(name, par, total), runtimetest.Options{Types: testTypes,
			CheckpointsDir: t.TempDir(), SavepointsDir: spDir, Restore: path})
		if i < 2 {
			waitRead(t, j, total/10)
			var err error
			path, _, err = j.Stop("", false)
			require.NoError(t, err)
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
			if i == 0 {
				require.Empty(t, j.Info().RestoredFrom)
			}
			continue
		}
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
		require.Equal(t, path, j.Info().RestoredFrom)
	}
	final := runtimetest.MaxCounts(t, runtimetest.Values(name))
	sum := 0
	for _, n := range final {
		sum += n
	}
	require.Equal(t, total, sum, "counts %v", final)
}

// A savepoint is self-contained: moved elsewhere it restores the same.
func TestSavepointRelocatable(t *testing.T) {
	name := fmt.Sprintf("moved-%d", time.Now().UnixNano())
	j := runtimetest.Start(t, countingSpec(name, 2, 1_000_000), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	waitRead(t, j, 1000)
	target := t.TempDir()
	path, id, err := j.Savepoint(target)
	require.NoError(t, err)
	require.Greater(t, id, int64(0))
	require.Equal(t, api.StateRunning, j.State())
	require.NoError(t, j.Cancel())
	moved := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.Rename(path, moved))
	r, err := engine.LoadRestore(vfs.Default, filepath.Join(moved, checkpoint.MetadataFile))
	require.NoError(t, err)
	require.Equal(t, "savepoint", r.Kind())
	require.Equal(t, moved, r.Dir)
	g, err := engine.Compile(testRegistry, "x.yaml", []byte(countingSpec(name, 1, 100)), engine.Defaults{})
	require.NoError(t, err)
	plan := engine.PlanRestore(g, r, engine.RestoreOptions{})
	require.NoError(t, plan.Err())
	require.Len(t, plan.Matched, 4)
}

// Restoring state of an operator the job no longer has is refused, naming
// it, unless allowed; a changed type for a uid is refused.
func TestRestorePlanProblems(t *testing.T) {
	name := fmt.Sprintf("plan-%d", time.Now().UnixNano())
	j := runtimetest.Start(t, countingSpec(name, 1, 1_000_000), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	waitRead(t, j, 1000)
	path, _, err := j.Savepoint(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, j.Cancel())
	r, err := engine.LoadRestore(vfs.Default, path)
	require.NoError(t, err)

	without := `
name: counting
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: discard, from: [gen]}
`
	g, err := engine.Compile(testRegistry, "x.yaml", []byte(without), engine.Defaults{})
	require.NoError(t, err)
	plan := engine.PlanRestore(g, r, engine.RestoreOptions{})
	require.ErrorContains(t, plan.Err(), "cnt (type count,")
	require.ErrorContains(t, plan.Err(), "--allow-non-restored-state")
	require.Len(t, plan.Dropped, 1, "only operators with state count: %v", plan.Dropped)
	require.Empty(t, plan.New)
	require.NoError(t, engine.PlanRestore(g, r, engine.RestoreOptions{AllowNonRestored: true}).Err())

	retyped := `
name: counting
operators:
  - {uid: gen, type: datagen}
  - {uid: key, type: map, from: [gen], expr: "idx"}
  - {uid: cnt, type: filter, from: [key], expr: "true"}
  - {uid: out, type: discard, from: [cnt]}
`
	g, err = engine.Compile(testRegistry, "x.yaml", []byte(retyped), engine.Defaults{})
	require.NoError(t, err)
	plan = engine.PlanRestore(g, r, engine.RestoreOptions{AllowNonRestored: true})
	require.ErrorContains(t, plan.Err(), `operator "cnt" was of type count in the snapshot and is filter now`)
	// The refused operator is not shown as restored with its old type.
	for _, m := range plan.Matched {
		if m.UID == "cnt" {
			require.Equal(t, "filter", m.NewType)
			require.Contains(t, m.Problem, "state of one type cannot be read by another")
		}
	}
}
