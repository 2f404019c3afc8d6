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

// countSumAvg are aggregates that can be taken back (a sliding window's
// running result) and do not depend on fold order (a session grown in
// place).
const countSumAvg = `
    aggregate:
      n: count()
      total: sum(amount)
      mean: avg(amount)`

// With only count, sum and avg, a sliding window keeps a running result per
// key (previous window + entering panes - leaving panes): the results must
// be those computed anew, with and without late records within the
// lateness, and with panes narrower than the slide.
func TestSlidingRunningResultMatchesReference(t *testing.T) {
	for _, c := range []struct {
		name, window, lateness string
		size, slide            int64
	}{
		{"panes=slide", "{type: sliding, size: 3s, slide: 500ms}", "", 3000, 500},
		{"panes<slide", "{type: sliding, size: 1s, slide: 400ms}", "", 1000, 400},
		{"late within lateness", "{type: sliding, size: 2s, slide: 500ms}", "3500ms", 2000, 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			spec := windowJob(name, c.window, "", 2)
			spec = strings.Replace(spec, aggregates, countSumAvg, 1)
			var want map[string]result
			if c.lateness != "" {
				spec = strings.Replace(lateSpec(name, c.lateness), aggregates, countSumAvg, 1)
				spec = strings.Replace(spec, "{type: tumbling, size: 1s}", c.window, 1)
				g := newGen(gen{N: 3000, Step: 10, Block: 5, Keys: 3, LateEvery: 97, LateBy: 4000})
				_ = g
			} else {
				want = referenceWindows(exactGen.all(), c.size, c.slide)
			}
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			final := map[string]result{}
			for _, v := range runtimetest.Values(name) {
				var r result
				require.NoError(t, json.Unmarshal([]byte(v), &r), v)
				final[r.id()] = r
			}
			if want == nil {
				// Late records: compare with the same job run with a non-invertible
				// aggregate added (which merges the panes anew at every firing).
				name2 := runtimetest.UniqueName(t)
				spec2 := strings.Replace(strings.ReplaceAll(spec, name, name2), "mean: avg(amount)", "mean: avg(amount)\n      lo: min(amount)", 1)
				j2 := runtimetest.Start(t, spec2, runtimetest.Options{Types: testTypes})
				require.Equal(t, api.StateFinished, runtimetest.Wait(t, j2, 60*time.Second), j2.Info().Error)
				want = map[string]result{}
				for _, v := range runtimetest.Values(name2) {
					var r result
					require.NoError(t, json.Unmarshal([]byte(v), &r), v)
					r.Lo = 0
					want[r.id()] = r
				}
				require.Equal(t, len(runtimetest.Values(name2)), len(runtimetest.Values(name)), "as many firings")
			}
			require.Equal(t, len(want), len(final), "windows")
			for id, w := range want {
				g, ok := final[id]
				require.True(t, ok, "window %s missing", id)
				require.Equal(t, w.N, g.N, id)
				require.Equal(t, w.Total, g.Total, id)
				require.InDelta(t, float64(w.Total)/float64(w.N), g.Mean, 1e-9, id)
			}
		})
	}
}
