package join_test

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/joinref"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// testdata/oldsavepoint is a stop-with-savepoint of oldJoinSpec written by
// flinkgo 1e2fd4a (join key state format 1: one timer per key, an interval
// join's at the earlier of its sides' expiries), a third of the way in.
// testdata/oldsavepoint-<join>-before.txt.gz are the results the joins had
// emitted by the end of that run, -after.txt.gz those 1e2fd4a emits when
// it restores the savepoint (sorted). This version restores it and emits
// the same results as 1e2fd4a, and none of the reference's is lost.
// (The end of a stop without drain fires the joins' timers after the
// savepoint, so before and after overlap: both hold the unmatched rows
// and windows that were open at the stop.)
func TestRestoresJoinSavepointOfOlderVersion(t *testing.T) {
	for _, n := range []string{"oldsp-interval", "oldsp-window"} {
		runtimetest.Reset(n)
	}
	j := runtimetest.Start(t, oldJoinSpec(), runtimetest.Options{Types: testTypes, Restore: "testdata/oldsavepoint", CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, time.Minute), j.Info().Error)
	ls, rs := leftStream.Events(), rightStream.Events()
	for _, c := range []struct {
		name string
		want []string
	}{
		{"interval", joinref.Interval(ls, rs, -40, 300, "left")},
		{"window", joinref.Window(ls, rs, 200, 200, "full")},
	} {
		got := runtimetest.Values("oldsp-" + c.name)
		sort.Strings(got)
		requireSameResults(t, gzLines(t, "testdata/oldsavepoint-"+c.name+"-after.txt.gz"), got)
		seen := map[string]bool{}
		for _, v := range append(gzLines(t, "testdata/oldsavepoint-"+c.name+"-before.txt.gz"), got...) {
			seen[v] = true
		}
		for _, w := range c.want {
			require.True(t, seen[w], "%s: reference result %s lost", c.name, w)
		}
	}
}

func gzLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	var out []string
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		if sc.Text() != "" {
			out = append(out, sc.Text())
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// oldJoinSpec is the job of testdata/oldsavepoint: an interval join (left
// outer) and a full tumbling window join of the test streams, paced so
// that a savepoint lands among stored rows and open windows.
func oldJoinSpec() string {
	return fmt.Sprintf(`
name: join-old-savepoint
parallelism: 1
watermarkInterval: 2ms
checkpointing: {interval: 1h, mode: exactly-once}
operators:
  - %s
  - %s
  - {uid: ij, type: intervalJoin, left: {from: l, key: user}, right: {from: r, key: user}, lower: -40ms, upper: 300ms, how: left, select: %s}
  - {uid: wj, type: windowJoin, left: {from: l, key: user}, right: {from: r, key: user}, window: {type: tumbling, size: 200ms}, how: full, select: %s}
  - {uid: ci, type: test-collect, from: [ij], name: oldsp-interval}
  - {uid: cw, type: test-collect, from: [wj], name: oldsp-window}
`, leftStream.Spec("l", 1, 3000), rightStream.Spec("r", 1, 4000), joinref.IntervalSelect, joinref.WindowSelect)
}
