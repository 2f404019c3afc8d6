package window_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// result is one window result as the operator emits it.
type result struct {
	Key         string  `json:"key"`
	WindowStart int64   `json:"windowStart"`
	WindowEnd   int64   `json:"windowEnd"`
	N           int64   `json:"n"`
	Total       int64   `json:"total"`
	Lo          int64   `json:"lo"`
	Hi          int64   `json:"hi"`
	Mean        float64 `json:"mean"`
	FirstI      int64   `json:"firstI"`
	LastI       int64   `json:"lastI"`
	Distinct    int64   `json:"distinct"`
	Best        int64   `json:"best"`
}

func (r result) id() string { return fmt.Sprintf("%s@%d-%d", r.Key, r.WindowStart, r.WindowEnd) }

const aggregates = `
    aggregate:
      n: count()
      total: sum(amount)
      lo: min(amount)
      hi: max(amount)
      mean: avg(amount)
      firstI: first(i)
      lastI: last(i)
      distinct: countDistinct(amount % 10)
      best: maxBy(i, amount)`

// reference computes the results of one window from its events, without
// any of flinkgo's operators.
func reference(key string, start, end int64, evs []event) result {
	r := result{Key: key, WindowStart: start, WindowEnd: end, Lo: 1 << 62, Hi: -1}
	var first, last event
	distinct := map[int64]bool{}
	bestAmount, bestTS := int64(-1), int64(0)
	for k, e := range evs {
		r.N++
		r.Total += e.Amount
		r.Lo, r.Hi = min(r.Lo, e.Amount), max(r.Hi, e.Amount)
		if k == 0 || e.TS < first.TS {
			first = e
		}
		if k == 0 || e.TS > last.TS {
			last = e
		}
		distinct[e.Amount%10] = true
		if e.Amount > bestAmount || (e.Amount == bestAmount && e.TS < bestTS) {
			bestAmount, bestTS, r.Best = e.Amount, e.TS, e.I
		}
	}
	r.Mean = float64(r.Total) / float64(r.N)
	r.FirstI, r.LastI, r.Distinct = first.I, last.I, int64(len(distinct))
	return r
}

// referenceTumbling and referenceSliding group events into their windows.
func referenceWindows(evs []event, size, slide int64) map[string]result {
	byWindow := map[string][]event{}
	type w struct {
		key        string
		start, end int64
	}
	windows := map[string]w{}
	for _, e := range evs {
		// Every window [s, s+size) with s a multiple of slide and s <= ts < s+size.
		for s := floorDiv(e.TS, slide) * slide; s > e.TS-size; s -= slide {
			id := fmt.Sprintf("%s@%d-%d", e.Key, s, s+size)
			byWindow[id] = append(byWindow[id], e)
			windows[id] = w{e.Key, s, s + size}
		}
	}
	out := map[string]result{}
	for id, win := range windows {
		out[id] = reference(win.key, win.start, win.end, byWindow[id])
	}
	return out
}

// referenceSessions merges each key's events into sessions of gap.
func referenceSessions(evs []event, gap int64) map[string]result {
	byKey := map[string][]event{}
	for _, e := range evs {
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	out := map[string]result{}
	for key, es := range byKey {
		sort.Slice(es, func(i, j int) bool { return es[i].TS < es[j].TS })
		var cur []event
		flush := func() {
			if len(cur) > 0 {
				r := reference(key, cur[0].TS, cur[len(cur)-1].TS+gap, cur)
				out[r.id()] = r
			}
			cur = nil
		}
		for _, e := range es {
			if len(cur) > 0 && e.TS > cur[len(cur)-1].TS+gap {
				flush()
			}
			cur = append(cur, e)
		}
		flush()
	}
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// collected parses a test-collect sink's values, each window at most once.
func collected(t *testing.T, name string) map[string]result {
	t.Helper()
	out := map[string]result{}
	for _, v := range runtimetest.Values(name) {
		var r result
		require.NoError(t, json.Unmarshal([]byte(v), &r), v)
		_, dup := out[r.id()]
		require.False(t, dup, "window %s emitted twice: %s", r.id(), v)
		out[r.id()] = r
	}
	return out
}

func requireSameResults(t *testing.T, want, got map[string]result) {
	t.Helper()
	require.Equal(t, len(want), len(got), "number of windows")
	for id, w := range want {
		g, ok := got[id]
		require.True(t, ok, "window %s missing", id)
		require.InDelta(t, w.Mean, g.Mean, 1e-9, id)
		w.Mean, g.Mean = 0, 0
		require.Equal(t, w, g, id)
	}
}

func windowJob(name, window, extra string, par int) string {
	return fmt.Sprintf(`
name: windows
parallelism: %d
watermarkInterval: 2ms
operators:
  - uid: src
    type: test-events
    n: 20000
    step: 7
    block: 40
    keys: 13
    splits: 4
    eventTime: {timestamp: ts, maxOutOfOrderness: 280ms}
  - {uid: byKey, type: keyBy, from: [src], expr: user}
  - uid: win
    type: window
    from: [byKey]
    window: %s%s%s
  - {uid: out, type: test-collect, from: [win], name: %s, parallelism: 1}
`, par, window, aggregates, extra, name)
}

var exactGen = newGen(gen{N: 20000, Step: 7, Block: 40, Keys: 13})

// Shuffled input within the bound, 13 keys, 4 splits at parallelism 2:
// every window type emits, once per window, what a plain computation over
// the raw input gives.
func TestWindowsMatchReference(t *testing.T) {
	for _, c := range []struct {
		name, window string
		want         map[string]result
	}{
		{"tumbling", "{type: tumbling, size: 1s}", referenceWindows(exactGen.all(), 1000, 1000)},
		{"sliding", "{type: sliding, size: 3s, slide: 500ms}", referenceWindows(exactGen.all(), 3000, 500)},
		{"sliding-uneven", "{type: sliding, size: 1s, slide: 400ms}", referenceWindows(exactGen.all(), 1000, 400)},
		{"session", "{type: session, gap: 60ms}", referenceSessions(exactGen.all(), 60)},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			defer runtimetest.Reset(name)
			j := runtimetest.Start(t, windowJob(name, c.window, "", 2), runtimetest.Options{Types: testTypes})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			requireSameResults(t, c.want, collected(t, name))
			var late int64
			for _, op := range j.Info().Operators {
				if op.UID == "win" {
					late = op.Metrics["numLateRecordsDropped"]
				}
			}
			require.Zero(t, late, "no record is late within the bound")
		})
	}
	require.True(t, strings.Contains(aggregates, "maxBy"))
}
