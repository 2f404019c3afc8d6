package join_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/joinref"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// Rows too late to join are counted per side and sent to the side outputs
// lateLeft and lateRight, never dropped silently: the results are the
// reference join of every row that was not late, and the late rows are
// exactly those on the side outputs, each one of the deliberately late.
func TestLateRowsPerSideGoToTheirSideOutputs(t *testing.T) {
	lateLeft := joinref.NewStream(3000, 31, 1, 10*time.Millisecond, 300*time.Millisecond)
	lateLeft.Opts.LateEvery, lateLeft.Opts.LateBy = 40, 5*time.Second
	lateRight := joinref.NewStream(4000, 31, 2, 7*time.Millisecond, 300*time.Millisecond)
	lateRight.Opts.LateEvery, lateRight.Opts.LateBy = 70, 4*time.Second
	for _, c := range []struct {
		name, join string
		ref        func(ls, rs []datagen.Event) []string
	}{
		{"window", `type: windowJoin
    window: {type: tumbling, size: 1s}
    how: full
    select: ` + joinref.WindowSelect, func(ls, rs []datagen.Event) []string { return joinref.Window(ls, rs, 1000, 1000, "full") }},
		{"interval", `type: intervalJoin
    lower: -50ms
    upper: 50ms
    how: left
    select: ` + joinref.IntervalSelect, func(ls, rs []datagen.Event) []string { return joinref.Interval(ls, rs, -50, 50, "left") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			spec := fmt.Sprintf(`
name: join-late
parallelism: 2
watermarkInterval: 5ms
operators:
  - %s
  - %s
  - uid: j
    left: {from: l, key: user}
    right: {from: r, key: user}
    %s
  - {uid: out, type: test-collect, from: [j], name: %s, parallelism: 1}
  - {uid: ll, type: test-collect, from: [j.lateLeft], name: %s-left, parallelism: 1}
  - {uid: lr, type: test-collect, from: [j.lateRight], name: %s-right, parallelism: 1}
`, lateLeft.Spec("l", 1, 20000), lateRight.Spec("r", 1, 20000), c.join, name, name, name)
			runtimetest.Reset(name + "-left")
			runtimetest.Reset(name + "-right")
			j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 2*time.Minute), j.Info().Error)
			var metrics map[string]int64
			for _, op := range j.Info().Operators {
				if op.UID == "j" {
					metrics = op.Metrics
				}
			}
			ls, lateL := withoutLate(t, lateLeft.Events(), runtimetest.Values(name+"-left"))
			rs, lateR := withoutLate(t, lateRight.Events(), runtimetest.Values(name+"-right"))
			t.Logf("late rows: %d left, %d right", lateL, lateR)
			require.Positive(t, lateL)
			require.Positive(t, lateR)
			require.Equal(t, int64(lateL), metrics["numLateRecordsDroppedLeft"])
			require.Equal(t, int64(lateR), metrics["numLateRecordsDroppedRight"])
			got := runtimetest.Values(name)
			sort.Strings(got)
			requireSameResults(t, c.ref(ls, rs), got)
		})
	}
}

// withoutLate removes the rows a side output received from evs; each must
// be a deliberately late one.
func withoutLate(t *testing.T, evs []datagen.Event, late []string) ([]datagen.Event, int) {
	t.Helper()
	gone := map[int64]bool{}
	for _, v := range late {
		var r struct{ Idx int64 }
		require.NoError(t, json.Unmarshal([]byte(v), &r), v)
		require.False(t, gone[r.Idx], "late row %d twice", r.Idx)
		gone[r.Idx] = true
	}
	var out []datagen.Event
	for _, e := range evs {
		if gone[e.Idx] {
			require.True(t, e.Late, "row %d went to the late output but is not late", e.Idx)
			continue
		}
		out = append(out, e)
	}
	return out, len(gone)
}
