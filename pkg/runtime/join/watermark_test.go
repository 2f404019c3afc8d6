package join_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/joinref"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// A join's watermark is the lower of its two inputs': one side runs
// unpaced to its end (its watermark jumps to the end of time) while the
// other is paced over about a second and a half. Were the join's watermark
// the faster side's, every row of the slow side would be late; with the
// lower one none is, and the results are the reference's. Both ways round.
func TestJoinWatermarkIsTheLowerOfItsInputs(t *testing.T) {
	ls, rs := leftStream.Events(), rightStream.Events()
	for _, slow := range []string{"left", "right"} {
		t.Run("slow "+slow, func(t *testing.T) {
			lrate, rrate := 0, 0
			if slow == "left" {
				lrate = 2000
			} else {
				rrate = 2500
			}
			name := runtimetest.UniqueName(t)
			spec := fmt.Sprintf(`
name: join-watermark
parallelism: 2
watermarkInterval: 5ms
operators:
  - %s
  - %s
  - uid: j
    type: windowJoin
    left: {from: l, key: user}
    right: {from: r, key: user}
    window: {type: tumbling, size: 1s}
    how: full
    select: %s
  - {uid: out, type: test-collect, from: [j], name: %s, parallelism: 1}
`, leftStream.Spec("l", 1, lrate), rightStream.Spec("r", 1, rrate), joinref.WindowSelect, name)
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 2*time.Minute), j.Info().Error)
			for _, op := range j.Info().Operators {
				if op.UID == "j" {
					require.Zero(t, op.Metrics["numLateRecordsDroppedLeft"], "late left rows")
					require.Zero(t, op.Metrics["numLateRecordsDroppedRight"], "late right rows")
				}
			}
			got := runtimetest.Values(name)
			sort.Strings(got)
			requireSameResults(t, joinref.Window(ls, rs, 1000, 1000, "full"), got)
		})
	}
}
