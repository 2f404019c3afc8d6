package window_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// waitRead waits until job j's source (its first operator) has emitted n
// records: a savepoint or stop after it lands among open windows, however
// fast or loaded the machine (after a fixed sleep the 20,000 events of
// restoreSpec may all be read on one machine and few on another).
func waitRead(t *testing.T, j *engine.Job, n int64) {
	t.Helper()
	runtimetest.WaitUntil(t, 30*time.Second, fmt.Sprintf("%d records read", n), func() bool {
		ops := j.Info().Operators
		return len(ops) > 0 && ops[0].RecordsOut >= n
	})
}

// restoreSpec: the exactness job into an exactly-once file sink, its source
// slowed down so a savepoint lands among open windows.
func restoreSpec(window, out string, par int) string {
	return fmt.Sprintf(`
name: windows-restore
parallelism: %d
watermarkInterval: 2ms
checkpointing: {interval: 50ms}
operators:
  - uid: src
    type: test-events
    n: 20000
    step: 7
    block: 40
    keys: 13
    splits: 4
    perPoll: 100
    pause: 2ms
    eventTime: {timestamp: ts, maxOutOfOrderness: 280ms}
  - {uid: byKey, type: keyBy, from: [src], expr: user}
  - uid: win
    type: window
    from: [byKey]
    window: %s%s
  - {uid: files, type: file, from: [win], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, par, window, aggregates, out)
}

// fileResults reads the committed window results of a file sink.
func fileResults(t *testing.T, dir string) map[string]result {
	t.Helper()
	out := map[string]result{}
	for _, line := range runtimetest.FinishedLines(t, dir) {
		var r result
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		_, dup := out[r.id()]
		require.False(t, dup, "window %s committed twice", r.id())
		out[r.id()] = r
	}
	return out
}

// A savepoint among open windows, cancel, and run -s at another
// parallelism: the committed results are those of an uninterrupted run,
// each window once (window state, the fired watermark or the timers, and
// positions all restored, keyed state redistributed by key group).
// Tumbling and sliding windows fire by watermark, with no timer per key;
// sessions keep a timer per key.
func TestSavepointAmongOpenWindowsRestoresAtAnotherParallelism(t *testing.T) {
	for _, c := range []struct {
		name, window string
		want         map[string]result
		timers       bool
	}{
		{"tumbling", "{type: tumbling, size: 1s}", referenceWindows(exactGen.all(), 1000, 1000), false},
		{"sliding", "{type: sliding, size: 3s, slide: 500ms}", referenceWindows(exactGen.all(), 3000, 500), false},
		{"session", "{type: session, gap: 60ms}", referenceSessions(exactGen.all(), 60), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, sp, chk := t.TempDir(), t.TempDir(), t.TempDir()
			j := runtimetest.Start(t, restoreSpec(c.window, out, 2), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, SavepointsDir: sp})
			runtimetest.WaitCheckpoint(t, 20*time.Second, j)
			waitRead(t, j, 5000)
			path, _, err := j.Savepoint("")
			require.NoError(t, err)
			info := j.Info()
			runtimetest.Cancel(t, 20*time.Second, j)
			for _, op := range info.Operators {
				if op.UID == "win" {
					require.Greater(t, op.Metrics["openWindows"], int64(0), "the savepoint holds open windows")
					require.Greater(t, op.Metrics["keys"], int64(0))
					require.Equal(t, c.timers, op.Metrics["timers"] > 0, "timers: %d", op.Metrics["timers"])
					require.NotNil(t, op.InputWatermark, "info shows the window's watermarks")
					require.NotNil(t, op.OutputWatermark)
					require.NotNil(t, op.WatermarkLagMs)
				}
			}
			r, err := engine.LoadRestore(vfs.Default, path)
			require.NoError(t, err)
			require.Equal(t, c.timers, r.Meta.Operator("win").TimerKeys() > 0, "savepoint inspect counts the keys with timers")
			j = runtimetest.Start(t, restoreSpec(c.window, out, 3), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, Restore: path})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			requireSameResults(t, c.want, fileResults(t, out))
		})
	}
}

// stop without --drain is a savepoint and an end, not an end of input: no
// window fires after the savepoint (Flink emits no final watermark then),
// so a sink that cannot take output back (here one that collects every
// record it gets) sees each window once across the stop and the run -s.
// (stop --drain fires them at the stop: for a job that is not resumed.)
func TestStopWithoutDrainFiresNothingAfterTheSavepoint(t *testing.T) {
	want := referenceWindows(exactGen.all(), 1000, 1000)
	name := runtimetest.UniqueName(t)
	spec := func(par int) string {
		return strings.Replace(restoreSpec("{type: tumbling, size: 1s}", "unused", par),
			"{uid: files, type: file, from: [win], path: unused, bucket: none, rolling: {onCheckpoint: true}}",
			"{uid: files, type: test-collect, from: [win], name: "+name+"}", 1)
	}
	sp, chk := t.TempDir(), t.TempDir()
	j := runtimetest.Start(t, spec(2), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, SavepointsDir: sp})
	runtimetest.WaitCheckpoint(t, 20*time.Second, j)
	waitRead(t, j, 5000)
	path, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	require.Less(t, len(runtimetest.Values(name)), len(want), "the stop came among open windows")
	j = runtimetest.Start(t, spec(3), runtimetest.Options{Types: testTypes, CheckpointsDir: chk, Restore: path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	got := map[string]result{}
	for _, v := range runtimetest.Values(name) {
		var r result
		require.NoError(t, json.Unmarshal([]byte(v), &r), v)
		_, dup := got[r.id()]
		require.False(t, dup, "window %s emitted twice", r.id())
		got[r.id()] = r
	}
	requireSameResults(t, want, got)
}
