package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/joinref"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// Join jobs of the real binary survive kill -9 of the daemon: a window
// join (full outer) and interval joins (left outer; one bounded by until)
// of two shuffled streams into exactly-once file sinks; the daemon is
// killed after a few checkpoints, resumes the jobs from their latest
// checkpoint, and the committed results equal the reference, each once.
// A savepoint taken before the crash shows each side's state in savepoint
// inspect.
// Sequential (no t.Parallel): the three bounded jobs must still run when
// every one has checkpointed, which a loaded machine can outlast.
func TestJoinsSurviveKill9(t *testing.T) {
	ls := joinref.NewStream(2500, 17, 1, 10*time.Millisecond, 200*time.Millisecond)
	rs := joinref.NewStream(3000, 17, 2, 8*time.Millisecond, 200*time.Millisecond)
	cases := []struct {
		name, join string
		want       []string
	}{
		{"window", "type: windowJoin\n    window: {type: tumbling, size: 1s}\n    how: full\n    select: " + joinref.WindowSelect,
			joinref.Window(ls.Events(), rs.Events(), 1000, 1000, "full")},
		{"interval", "type: intervalJoin\n    lower: -40ms\n    upper: 200ms\n    how: left\n    select: " + joinref.IntervalSelect,
			joinref.Interval(ls.Events(), rs.Events(), -40, 200, "left")},
		{"interval-until", "type: intervalJoin\n    lower: -40ms\n    until: left.ts + left.amount * 2\n    how: left\n    select: " + joinref.IntervalSelect,
			joinref.IntervalUntil(ls.Events(), rs.Events(), -40, joinref.Unbounded, func(l *datagen.Event) int64 { return l.TS + l.Amount*2 }, "left")},
	}
	e := newEnv(t)
	e.startDaemon()
	ids := make([]string, len(cases))
	for i, c := range cases {
		spec := fmt.Sprintf(`
name: join-%s
parallelism: 2
watermarkInterval: 10ms
checkpointing: {interval: 150ms}
operators:
  - %s
  - %s
  - uid: j
    left: {from: l, key: user}
    right: {from: r, key: user}
    %s
  - {uid: files, type: file, from: [j], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, c.name, ls.Spec("l", 2, 300), rs.Spec("r", 2, 360), c.join, filepath.Join(e.home, "out-"+c.name))
		ids[i] = e.mustRun("run", e.writeSpec(c.name+".yaml", spec))
	}
	for _, id := range ids {
		deadline := time.Now().Add(30 * time.Second)
		for {
			info := e.info(id)
			require.Equal(t, api.StateRunning, info.State, "job %s ended before the crash: %s", id, info.Error)
			if info.Checkpoints != nil && info.Checkpoints.Completed >= 3 {
				break
			}
			require.True(t, time.Now().Before(deadline), "no checkpoints: %+v", info)
			time.Sleep(50 * time.Millisecond)
		}
	}
	sp := e.mustRun("savepoint", ids[0], filepath.Join(e.home, "sp"))
	out := e.mustRun("savepoint", "inspect", sp)
	for _, k := range []string{"j[0] leftRows:", "j[0] rightRows:", "j[1] leftBytes:", "j[1] rightBytes:"} {
		require.Contains(t, out, k, "inspect shows the join's state per side")
	}
	e.killDaemon()

	e.startDaemon()
	for i, c := range cases {
		info := e.waitState(ids[i], api.StateFinished, 2*time.Minute)
		require.Contains(t, info.RestoredFrom, "chk-", "resumed from a checkpoint")
		got := finishedLines(t, filepath.Join(e.home, "out-"+c.name))
		require.Equal(t, len(c.want), len(got), "%s: results", c.name)
		for k := range c.want {
			require.Equal(t, c.want[k], got[k], "%s: result %d", c.name, k)
		}
	}
}
