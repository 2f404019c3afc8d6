package window_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// With only order-free aggregates (count, sum, avg, countDistinct) a
// record that starts inside its key's session grows that session in place
// (extendSession): the results must be the reference's on shuffled input,
// and, with late records within the lateness, those of the same job with a
// min() added (which takes the general merge path for every record).
func TestSessionInPlaceMatchesReference(t *testing.T) {
	const orderFree = countSumAvg + `
      distinct: countDistinct(amount % 10)`
	t.Run("shuffled", func(t *testing.T) {
		name := runtimetest.UniqueName(t)
		defer runtimetest.Reset(name)
		spec := strings.Replace(windowJob(name, "{type: session, gap: 60ms}", "", 2), aggregates, orderFree, 1)
		j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
		for _, op := range j.Info().Operators {
			if op.UID == "win" { // every session fired and was dropped
				require.Equal(t, int64(0), op.Metrics["keys"], "keys gauge")
				require.Equal(t, int64(0), op.Metrics["openWindows"], "open windows gauge")
			}
		}
		want, got := referenceSessions(exactGen.all(), 60), collected(t, name)
		require.Equal(t, len(want), len(got), "sessions")
		for id, w := range want {
			g, ok := got[id]
			require.True(t, ok, "session %s missing", id)
			require.Equal(t, [3]int64{w.N, w.Total, w.Distinct}, [3]int64{g.N, g.Total, g.Distinct}, id)
			require.InDelta(t, w.Mean, g.Mean, 1e-9, id)
		}
	})
	t.Run("late within lateness", func(t *testing.T) {
		run := func(aggs string) []string {
			name := runtimetest.UniqueName(t)
			defer runtimetest.Reset(name)
			spec := strings.Replace(lateSpec(name, "3500ms"), aggregates, aggs, 1)
			spec = strings.Replace(spec, "{type: tumbling, size: 1s}", "{type: session, gap: 40ms}", 1)
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			vs := runtimetest.Values(name)
			for i, v := range vs {
				if k := strings.Index(v, `,"lo":`); k >= 0 {
					vs[i] = v[:k] + "}"
				}
			}
			sort.Strings(vs)
			return append(vs, runtimetest.Values(name+"-late")...)
		}
		inPlace := run(orderFree)
		general := run(orderFree + "\n      lo: min(amount)")
		require.NotEmpty(t, inPlace)
		require.Equal(t, general, inPlace)
	})
}
