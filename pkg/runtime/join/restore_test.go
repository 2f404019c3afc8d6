package join_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/joinref"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// restoreSpec: a join of the test streams into an exactly-once file sink,
// the sources slowed down so a savepoint lands among open windows.
func restoreSpec(join, out string, par int) string {
	return fmt.Sprintf(`
name: join-restore
parallelism: %d
watermarkInterval: 2ms
checkpointing: {interval: 50ms}
operators:
  - %s
  - %s
  - uid: j
    left: {from: l, key: user}
    right: {from: r, key: user}
    %s
  - {uid: files, type: file, from: [j], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, par, leftStream.Spec("l", par, 3000), rightStream.Spec("r", par, 4000), join, out)
}

// A savepoint among open windows and stored rows, cancel, and run -s at
// another parallelism: the committed results are those of the reference,
// each once (join rows, timers and source positions restored; keyed state
// redistributed by key group). The savepoint shows each side's state.
func TestJoinSavepointRestoresAtAnotherParallelism(t *testing.T) {
	ls, rs := leftStream.Events(), rightStream.Events()
	for _, c := range []struct {
		name, join string
		want       []string
	}{
		{"tumbling-full", "type: windowJoin\n    window: {type: tumbling, size: 1s}\n    how: full\n    select: " + joinref.WindowSelect,
			joinref.Window(ls, rs, 1000, 1000, "full")},
		{"session-left", "type: windowJoin\n    window: {type: session, gap: 60ms}\n    how: left\n    select: " + joinref.WindowSelect,
			joinref.Session(ls, rs, 60, "left")},
		{"interval-left", "type: intervalJoin\n    lower: -40ms\n    upper: 300ms\n    how: left\n    select: " + joinref.IntervalSelect,
			joinref.Interval(ls, rs, -40, 300, "left")},
		{"interval-until-left", "type: intervalJoin\n    lower: -40ms\n    until: left.ts + left.amount * 3\n    how: left\n    select: " + joinref.IntervalSelect,
			joinref.IntervalUntil(ls, rs, -40, joinref.Unbounded, func(l *datagen.Event) int64 { return l.TS + l.Amount*3 }, "left")},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, sp, chk := t.TempDir(), t.TempDir(), t.TempDir()
			j := runtimetest.Start(t, restoreSpec(c.join, out, 2), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, SavepointsDir: sp})
			runtimetest.WaitCheckpoint(t, 20*time.Second, j)
			runtimetest.WaitUntil(t, 20*time.Second, "a third of the input", func() bool { return j.Info().Operators[0].RecordsOut >= 1000 })
			path, _, err := j.Savepoint("")
			require.NoError(t, err)
			runtimetest.Cancel(t, 20*time.Second, j)
			requireSidesInSavepoint(t, path)
			j = runtimetest.Start(t, restoreSpec(c.join, out, 3), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, Restore: path})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			requireSameResults(t, c.want, runtimetest.FinishedLines(t, out))
		})
	}
}

// requireSidesInSavepoint checks that the savepoint's metadata holds the
// join's state size per side, and that some rows were in state.
func requireSidesInSavepoint(t *testing.T, path string) {
	t.Helper()
	_, m, err := checkpoint.Load(vfs.Default, path)
	require.NoError(t, err)
	var rows float64
	for _, op := range m.Operators {
		if op.UID != "j" {
			continue
		}
		for _, h := range op.Subtasks {
			for _, k := range []string{"leftRows", "leftBytes", "rightRows", "rightBytes"} {
				require.Contains(t, h.Details, k, "subtask %d", h.Subtask)
			}
			rows += toFloat(h.Details["leftRows"]) + toFloat(h.Details["rightRows"])
		}
	}
	require.Positive(t, rows, "the savepoint holds join rows")
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}
