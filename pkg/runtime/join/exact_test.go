package join_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/joinref"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// The inputs of the exactness tests: shuffled by up to 300 ms, 31 keys, the
// right stream denser than the left, over about 30 s of event time.
var (
	leftStream  = joinref.NewStream(3000, 31, 1, 10*time.Millisecond, 300*time.Millisecond)
	rightStream = joinref.NewStream(4000, 31, 2, 7*time.Millisecond, 300*time.Millisecond)
)

func joinSpec(name, join string, par int) string {
	return fmt.Sprintf(`
name: join-exact
parallelism: %d
watermarkInterval: 5ms
operators:
  - %s
  - %s
  - uid: j
    %s
  - {uid: out, type: test-collect, from: [j], name: %s, parallelism: 1}
`, par, leftStream.Spec("l", 2, 0), rightStream.Spec("r", 3, 0), join, name)
}

// runJoin runs a join over the test streams and returns its sorted output.
func runJoin(t *testing.T, join string, par int) []string {
	t.Helper()
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, joinSpec(name, join, par), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 2*time.Minute), j.Info().Error)
	for _, op := range j.Info().Operators {
		if op.UID == "j" {
			require.Zero(t, op.Metrics["numLateRecordsDroppedLeft"]+op.Metrics["numLateRecordsDroppedRight"], "late rows")
			require.Zero(t, op.Metrics["leftRows"]+op.Metrics["rightRows"], "rows left in state at the end")
		}
	}
	got := runtimetest.Values(name)
	sort.Strings(got)
	return got
}

func requireSameResults(t *testing.T, want, got []string) {
	t.Helper()
	require.NotEmpty(t, want)
	nulls := 0
	for _, w := range want {
		if strings.Contains(w, "null") {
			nulls++
		}
	}
	t.Logf("%d results, %d of them unmatched rows", len(want), nulls)
	if len(want) != len(got) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		require.Equal(t, want[i], got[i], "result %d", i)
	}
}

// Window joins equal the reference for every window kind and every kind
// of join, over shuffled input with several keys, at parallelism 3 (each
// side partitioned by its own key into the join's key groups).
func TestWindowJoinEqualsReference(t *testing.T) {
	ls, rs := leftStream.Events(), rightStream.Events()
	for _, w := range []struct {
		name, window string
		ref          func(how string) []string
	}{
		{"tumbling", "{type: tumbling, size: 1s}", func(how string) []string { return joinref.Window(ls, rs, 1000, 1000, how) }},
		{"sliding", "{type: sliding, size: 1500ms, slide: 500ms}", func(how string) []string { return joinref.Window(ls, rs, 1500, 500, how) }},
		{"session", "{type: session, gap: 60ms}", func(how string) []string { return joinref.Session(ls, rs, 60, how) }},
	} {
		for _, how := range []string{"inner", "left", "right", "full"} {
			t.Run(w.name+"/"+how, func(t *testing.T) {
				spec := fmt.Sprintf(`type: windowJoin
    left: {from: l, key: user}
    right: {from: r, key: user}
    window: %s
    how: %s
    select: %s`, w.window, how, joinref.WindowSelect)
				requireSameResults(t, w.ref(how), runJoin(t, spec, 3))
			})
		}
	}
}

// Interval joins equal the reference, inner and left outer, for a window
// around the left row, one entirely after it and one ending at it.
func TestIntervalJoinEqualsReference(t *testing.T) {
	ls, rs := leftStream.Events(), rightStream.Events()
	for _, b := range []struct{ lower, upper int64 }{{-40, 25}, {100, 400}, {-200, 0}} {
		for _, how := range []string{"inner", "left"} {
			t.Run(fmt.Sprintf("%d..%d/%s", b.lower, b.upper, how), func(t *testing.T) {
				spec := fmt.Sprintf(`type: intervalJoin
    left: {from: l, key: user}
    right: {from: r, key: user}
    lower: %dms
    upper: %dms
    how: %s
    select: %s`, b.lower, b.upper, how, joinref.IntervalSelect)
				requireSameResults(t, joinref.Interval(ls, rs, b.lower, b.upper, how), runJoin(t, spec, 3))
			})
		}
	}
}

// until bounds each left row by its own time (q4: an auction's expiry),
// sooner than upper or with no upper at all: an until before the earliest
// match (lower 100ms, until 3..300 ms after the row), one that is null for
// some rows (upper bounds those), and one with no upper.
func TestIntervalJoinUntilEqualsReference(t *testing.T) {
	ls, rs := leftStream.Events(), rightStream.Events()
	after := func(k int64) func(*datagen.Event) int64 {
		return func(l *datagen.Event) int64 { return l.TS + l.Amount*k }
	}
	for _, c := range []struct {
		name, bounds string
		lower, upper int64
		until        func(*datagen.Event) int64
	}{
		{"before-lower", "lower: 100ms\n    upper: 400ms\n    until: left.ts + left.amount * 3", 100, 400, after(3)},
		{"null-for-some", "lower: -40ms\n    upper: 150ms\n    until: \"left.amount > 90 ? nil : left.ts + left.amount * 2\"", -40, 150,
			func(l *datagen.Event) int64 {
				if l.Amount > 90 {
					return joinref.NoUntil
				}
				return l.TS + l.Amount*2
			}},
		{"no-upper", "lower: -40ms\n    until: left.ts + left.amount * 4", -40, joinref.Unbounded, after(4)},
	} {
		for _, how := range []string{"inner", "left"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				spec := fmt.Sprintf(`type: intervalJoin
    left: {from: l, key: user}
    right: {from: r, key: user}
    %s
    how: %s
    select: %s`, c.bounds, how, joinref.IntervalSelect)
				requireSameResults(t, joinref.IntervalUntil(ls, rs, c.lower, c.upper, c.until, how), runJoin(t, spec, 3))
			})
		}
	}
}
