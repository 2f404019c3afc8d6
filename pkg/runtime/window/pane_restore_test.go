package window_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// stop --drain, then run -s from its savepoint (which the CLI only takes
// with --allow-drained): the input resumes where the stop left it; the
// windows that fired at the drain stay fired (a record of one is late, not
// a second firing with only the records after the drain), and the restored
// window windows the rest of the input.
func TestRunFromDrainedSavepointWindowsTheRest(t *testing.T) {
	name := runtimetest.UniqueName(t)
	spec := strings.Replace(restoreSpec("{type: tumbling, size: 1s}", "unused", 2),
		"{uid: files, type: file, from: [win], path: unused, bucket: none, rolling: {onCheckpoint: true}}",
		"{uid: files, type: test-collect, from: [win], name: "+name+"}", 1)
	sp, chk := t.TempDir(), t.TempDir()
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: chk, SavepointsDir: sp})
	runtimetest.WaitCheckpoint(t, 20*time.Second, j)
	waitRead(t, j, 5000)
	path, _, err := j.Stop("", true)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	before := len(runtimetest.Values(name))
	j = runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: chk, Restore: path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	require.Greater(t, len(runtimetest.Values(name)), before, "the restored job windows the rest of the input")
	seen := map[string]int{}
	for _, v := range runtimetest.Values(name) {
		var r result
		require.NoError(t, json.Unmarshal([]byte(v), &r), v)
		seen[r.id()]++
		require.Equal(t, 1, seen[r.id()], "window %s fired twice (once at the drain, again after the restore)", r.id())
	}
}

// Sliding windows without allowedLateness, records 1.5 s late (past the
// watermark, within the 3 s windows): each window must be emitted once.
func TestSlidingWindowsFireOnceWithoutLateness(t *testing.T) {
	name := runtimetest.UniqueName(t)
	spec := strings.Replace(lateSpec(name, ""), "lateBy: 4000", "lateBy: 1500", 1)
	spec = strings.Replace(spec, "window: {type: tumbling, size: 1s}", "window: {type: sliding, size: 3s, slide: 1s}", 1)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	seen := map[string]int{}
	for _, v := range runtimetest.Values(name) {
		var r result
		require.NoError(t, json.Unmarshal([]byte(v), &r), v)
		seen[r.id()]++
	}
	require.NotEmpty(t, seen)
	for id, n := range seen {
		require.Equal(t, 1, n, "window %s emitted %d times", id, n)
	}
}
