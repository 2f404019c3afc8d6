package window_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// testdata/mainsavepoint holds savepoints written by flinkgo 1e2fd4a (before
// the timers' bucket queue, the small per-key maps and the in-place
// sessions) among open windows of restoreSpec at parallelism 2, with the
// file sink's output so far: a sliding window with every aggregate, one
// with only count/sum/avg (the running result), and sessions of order-free
// aggregates (grown in place). The state formats did not change: this
// version restores each at parallelism 3 and commits the results of an
// uninterrupted run, each window once.
func TestRestoresSavepointOfMain(t *testing.T) {
	for _, c := range []struct {
		name, window, aggs string
		want               map[string]result
	}{
		{"sliding", "{type: sliding, size: 3s, slide: 500ms}", "", referenceWindows(exactGen.all(), 3000, 500)},
		{"sliding-running", "{type: sliding, size: 3s, slide: 500ms}", countSumAvg, referenceWindows(exactGen.all(), 3000, 500)},
		{"session", "{type: session, gap: 60ms}", countSumAvg, referenceSessions(exactGen.all(), 60)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			runtimetest.CopyTree(t, filepath.Join("testdata", "mainsavepoint", c.name), dir)
			out := filepath.Join(dir, "out")
			spec := restoreSpec(c.window, out, 3)
			if c.aggs != "" {
				spec = strings.Replace(spec, aggregates, c.aggs, 1)
			}
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(),
				Restore: filepath.Join(dir, "savepoint")})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			got := fileResults(t, out)
			if c.aggs == "" {
				requireSameResults(t, c.want, got)
				return
			}
			require.Equal(t, len(c.want), len(got), "windows")
			for id, w := range c.want {
				g, ok := got[id]
				require.True(t, ok, "window %s missing", id)
				require.Equal(t, [2]int64{w.N, w.Total}, [2]int64{g.N, g.Total}, id)
				require.InDelta(t, w.Mean, g.Mean, 1e-9, id)
			}
		})
	}
}
