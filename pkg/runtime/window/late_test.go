package window_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// lateSpec: one source subtask and split polled perPoll records at a time
// with a pause, so the source's watermark goes out after every poll and the
// window judges each record against the watermark of the polls before.
func lateSpec(name string, lateness string) string {
	lat := ""
	if lateness != "" {
		lat = "\n    allowedLateness: " + lateness
	}
	return fmt.Sprintf(`
name: late
parallelism: 1
watermarkInterval: 1ms
operators:
  - uid: src
    type: test-events
    n: 3000
    step: 10
    block: 5
    keys: 3
    splits: 1
    lateEvery: 97
    lateBy: 4000
    perPoll: 20
    pause: 3ms
    eventTime: {timestamp: ts, maxOutOfOrderness: 50ms}
  - {uid: byKey, type: keyBy, from: [src], expr: user}
  - uid: win
    type: window
    from: [byKey]
    window: {type: tumbling, size: 1s}%s%s
  - {uid: out, type: test-collect, from: [win], name: %s}
  - {uid: lateOut, type: test-collect, from: [win.late], name: %s-late}
`, aggregates, lat, name, name)
}

// lateReference replays the stream as the job sees it: record i is judged
// against the watermark of the polls before its own (the largest timestamp
// so far minus the bound, minus 1). It returns the records dropped as late,
// how many late records each window took within the lateness, and the
// records each window holds in the end.
func lateReference(g gen, perPoll int, bound, size, lateness int64) (dropped map[int64]bool, refires map[string]int, kept []event) {
	dropped, refires = map[int64]bool{}, map[string]int{}
	wm, maxTS := int64(-1<<63), int64(-1<<63)
	for i := int64(0); i < g.N; i++ {
		if i > 0 && i%int64(perPoll) == 0 {
			wm = max(wm, maxTS-bound-1)
		}
		e := g.event(i)
		maxTS = max(maxTS, e.TS)
		end := floorDiv(e.TS, size)*size + size
		switch {
		case end-1+lateness <= wm:
			dropped[e.I] = true
			continue
		case end-1 <= wm:
			refires[fmt.Sprintf("%s@%d-%d", e.Key, end-size, end)]++
		}
		kept = append(kept, e)
	}
	return dropped, refires, kept
}

// A window that only counts reads no Values (runtime.ValuesUnread), and
// is sent records without them unless its late output is read: then its
// late records reach it whole.
func TestLateRecordsAreCountedAndSideOutput(t *testing.T) {
	for _, countOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("count only %v", countOnly), func(t *testing.T) { testLateRecords(t, countOnly) })
	}
}

func testLateRecords(t *testing.T, countOnly bool) {
	g := newGen(gen{N: 3000, Step: 10, Block: 5, Keys: 3, LateEvery: 97, LateBy: 4000})
	dropped, _, kept := lateReference(g, 20, 50, 1000, 0)
	require.NotEmpty(t, dropped)
	name := runtimetest.UniqueName(t)
	spec := lateSpec(name, "")
	if countOnly {
		spec = strings.Replace(spec, aggregates, "\n    aggregate: {n: count()}", 1)
	}
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)

	want := referenceWindows(kept, 1000, 1000)
	if countOnly {
		for id, r := range want {
			want[id] = result{Key: r.Key, WindowStart: r.WindowStart, WindowEnd: r.WindowEnd, N: r.N}
		}
	}
	requireSameResults(t, want, collected(t, name))
	got := map[int64]bool{}
	for _, v := range runtimetest.Values(name + "-late") {
		var e struct{ I int64 }
		require.NoError(t, json.Unmarshal([]byte(v), &e), v)
		require.False(t, got[e.I], "late record %d sent twice", e.I)
		got[e.I] = true
	}
	require.Equal(t, dropped, got, "the side output holds exactly the records dropped as late")
	for _, op := range j.Info().Operators {
		if op.UID == "win" {
			require.Equal(t, int64(len(dropped)), op.Metrics["numLateRecordsDropped"])
		}
	}
}

// Within allowedLateness a late record updates its window, which fires
// again with the new result; records later than that are dropped.
func TestAllowedLatenessUpdatesWindows(t *testing.T) {
	g := newGen(gen{N: 3000, Step: 10, Block: 5, Keys: 3, LateEvery: 97, LateBy: 4000})
	dropped, refires, kept := lateReference(g, 20, 50, 1000, 3500)
	require.NotEmpty(t, refires, "some late records fall within the lateness")
	require.NotEmpty(t, dropped, "and some beyond it")
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, lateSpec(name, "3500ms"), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)

	final := map[string]result{}
	emissions := map[string]int{}
	for _, v := range runtimetest.Values(name) {
		var r result
		require.NoError(t, json.Unmarshal([]byte(v), &r), v)
		final[r.id()] = r // the last emission of a window is its final result
		emissions[r.id()]++
	}
	requireSameResults(t, referenceWindows(kept, 1000, 1000), final)
	for id, n := range emissions {
		require.Equal(t, 1+refires[id], n, "window %s fires once, then once per late record within the lateness", id)
	}
	require.Len(t, runtimetest.Values(name+"-late"), len(dropped))
}
