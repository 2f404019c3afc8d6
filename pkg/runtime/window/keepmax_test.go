package window_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// byWindow groups results by their window.
func byWindow(rs map[string]result) map[[2]int64][]result {
	out := map[[2]int64][]result{}
	for _, r := range rs {
		w := [2]int64{r.WindowStart, r.WindowEnd}
		out[w] = append(out[w], r)
	}
	return out
}

// topN is the results of each window with its greatest n (ties kept).
func topN(rs map[string]result) map[string]result {
	out := map[string]result{}
	for _, win := range byWindow(rs) {
		var most int64
		for _, r := range win {
			most = max(most, r.N)
		}
		for _, r := range win {
			if r.N == most {
				out[r.id()] = r
			}
		}
	}
	return out
}

// keepMax at parallelism 1 emits exactly each window's results with the
// greatest count, ties included. At parallelism 3 every subtask emits its
// own greatest: each result is the reference's, the window's top is among
// them, and a window has at most one count per subtask.
func TestKeepMaxEmitsEachWindowsGreatest(t *testing.T) {
	for _, c := range []struct {
		name, window string
		size, slide  int64
	}{
		{"tumbling", "{type: tumbling, size: 1s}", 1000, 1000},
		{"sliding", "{type: sliding, size: 1s, slide: 250ms}", 1000, 250},
	} {
		all := referenceWindows(exactGen.all(), c.size, c.slide)
		want := topN(all)
		require.Less(t, len(want), len(all)/2, "the case has results to leave out")
		for _, par := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/p%d", c.name, par), func(t *testing.T) {
				name := runtimetest.UniqueName(t)
				defer runtimetest.Reset(name)
				j := runtimetest.Start(t, windowJob(name, c.window, "\n    keepMax: n", par), runtimetest.Options{Types: testTypes})
				require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
				got := collected(t, name)
				if par == 1 {
					requireSameResults(t, want, got)
					return
				}
				for id, r := range got {
					w, ok := all[id]
					require.True(t, ok, "no window %s", id)
					require.InDelta(t, w.Mean, r.Mean, 1e-9, id)
					w.Mean, r.Mean = 0, 0
					require.Equal(t, w, r, id)
				}
				for id := range want {
					require.Contains(t, got, id, "a window's greatest is always emitted")
				}
				for w, rs := range byWindow(got) {
					counts := map[int64]bool{}
					for _, r := range rs {
						counts[r.N] = true
					}
					require.LessOrEqual(t, len(counts), par, "window %v: one greatest per subtask", w)
				}
				require.Less(t, len(got), len(all), "results were left out")
			})
		}
	}
}
