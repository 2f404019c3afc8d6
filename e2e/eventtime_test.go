package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// windowedSpec: datagen's event stream -> per user -> 1 s tumbling count and
// sum by event time -> exactly-once files.
func windowedSpec(out string, count int) string {
	return fmt.Sprintf(`
name: windowed
parallelism: 2
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 100ms}
watermarkInterval: 20ms
operators:
  - {uid: gen, type: datagen, format: events, count: %d, rate: 3000, keys: 11, step: 10ms, outOfOrderness: 300ms,
     eventTime: {maxOutOfOrderness: 300ms}}
  - {uid: key, type: keyBy, from: [gen], expr: user}
  - {uid: win, type: window, from: [key], window: {type: tumbling, size: 1s}, aggregate: {n: count(), total: sum(amount)}}
  - {uid: out, type: file, from: [win], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, count, out)
}

type e2eWindow struct {
	Key                    string
	WindowStart, WindowEnd int64
	N, Total               int64
}

// referenceWindows computes the job's windows from the generator.
func referenceWindows(t *testing.T, count int) map[string]e2eWindow {
	opts := datagen.DefaultEventOptions()
	opts.Keys, opts.Step, opts.OutOfOrderness = 11, 10*time.Millisecond, 300*time.Millisecond
	g, err := datagen.NewEvents(opts)
	require.NoError(t, err)
	out := map[string]e2eWindow{}
	for n := int64(1); n <= int64(count); n++ {
		e := g.At(n)
		start := e.TS - ((e.TS%1000)+1000)%1000
		id := fmt.Sprintf("%s@%d", g.User(e), start)
		w := out[id]
		w.Key, w.WindowStart, w.WindowEnd = g.User(e), start, start+1000
		w.N++
		w.Total += e.Amount
		out[id] = w
	}
	return out
}

// committedWindows reads a file sink's finished files: each window once.
func committedWindows(t *testing.T, dir string) map[string]e2eWindow {
	out := map[string]e2eWindow{}
	for _, line := range runtimetest.FinishedLines(t, dir) {
		var w e2eWindow
		require.NoError(t, json.Unmarshal([]byte(line), &w), line)
		id := fmt.Sprintf("%s@%d", w.Key, w.WindowStart)
		_, dup := out[id]
		require.False(t, dup, "window %s committed twice", id)
		out[id] = w
	}
	return out
}

// kill -9 of the daemon among open windows, three times: after each restart
// the job resumes from its latest checkpoint (window state, timers) and in
// the end every window is committed once with the figures of an
// uninterrupted run.
func TestKillDaemonWithOpenWindows(t *testing.T) {
	parallel(t)
	const count = 12000
	start := time.Now()
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("windowed.yaml", windowedSpec(out, count)))
	for kill := 0; kill < 3; kill++ {
		deadline := time.Now().Add(30 * time.Second)
		for {
			info := e.info(id)
			require.NotEqual(t, api.StateFailed, info.State, info.Error)
			if info.State == api.StateFinished {
				break
			}
			if info.Checkpoints != nil && info.Checkpoints.Completed >= int(2*(kill+1)) && info.State == api.StateRunning {
				break
			}
			require.True(t, time.Now().Before(deadline), "no checkpoints completed: %+v", info)
			time.Sleep(30 * time.Millisecond)
		}
		e.killDaemon()
		e.startDaemon()
	}
	info := e.waitState(id, api.StateFinished, 90*time.Second)
	require.Contains(t, info.RestoredFrom, "chk-", "the job resumed from a checkpoint after a kill")
	want, got := referenceWindows(t, count), committedWindows(t, out)
	lost, wrong := 0, 0
	for k, w := range want {
		if g, ok := got[k]; !ok {
			lost++
		} else if g != w {
			wrong++
		}
	}
	scorecard.Record(t, start, scorecard.Entry{Suite: "kill -9 among open windows, real binary (datagen events → window → file)",
		Faults: "3 crashes of the daemon during a windowed job", Planned: 3, Fired: 3, Cases: 1, Records: int64(len(want)),
		Lost: int64(lost), Duplicated: 0})
	require.Zero(t, lost, "windows lost")
	require.Zero(t, wrong, "windows with other figures than an uninterrupted run")
	require.Equal(t, len(want), len(got), "windows committed")
}
