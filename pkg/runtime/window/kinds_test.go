package window_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// Without a keyBy a window sees the whole stream (parallelism 1) and its
// results have no key.
func TestGlobalWindow(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: global
parallelism: 2
watermarkInterval: 2ms
operators:
  - uid: src
    type: test-events
    n: 20000
    step: 7
    block: 40
    keys: 13
    eventTime: {timestamp: ts, maxOutOfOrderness: 280ms}
  - uid: win
    type: window
    from: [src]
    parallelism: 1
    window: {type: tumbling, size: 1s}%s
  - {uid: out, type: test-collect, from: [win], name: %s, parallelism: 1}
`, aggregates, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	evs := exactGen.all()
	for i := range evs {
		evs[i].Key = "" // one window stream
	}
	requireSameResults(t, referenceWindows(evs, 1000, 1000), collected(t, name))
	for _, v := range runtimetest.Values(name) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(v), &m))
		require.NotContains(t, m, "key")
	}
}

func TestWindowSpecErrors(t *testing.T) {
	reg := runtimetest.Registry(t, testTypes)
	compile := func(win string, extra ...string) error {
		par := "1"
		if len(extra) > 0 {
			par = extra[0]
		}
		_, err := engine.Compile(reg, "w.yaml", []byte(fmt.Sprintf(`
name: w
operators:
  - {uid: src, type: test-events, n: 10, eventTime: {timestamp: ts}}
  - uid: win
    type: window
    from: [src]
    parallelism: %s
%s
  - {uid: out, type: test-collect, from: [win], name: x}
`, par, win)), engine.Defaults{})
		return err
	}
	for _, c := range []struct{ spec, want string }{
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: count()}", ""},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: count()}\n    parallelism: 2", "parallelism"},
		{"    window: {type: hopping, size: 1s}\n    aggregate: {n: count()}", `must be tumbling, sliding or session, got "hopping"`},
		{"    window: {type: sliding, size: 1s}\n    aggregate: {n: count()}", "a sliding window needs slide"},
		{"    window: {type: session, gap: 1s, size: 1s}\n    aggregate: {n: count()}", "a session window takes no size"},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: median(x)}", `unknown aggregate function "median"`},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: sum()}", "sum takes 1 arguments, got 0"},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {key: count()}", `"key" names a field every window result has`},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: count()}\n    time: wall", `must be event or processing, got "wall"`},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: count()}\n    time: processing\n    allowedLateness: 1s", "applies to event time"},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: 'sum(amount +)'}", "amount +"},
		{"    window: {type: sliding, size: 1s, slide: 100ms}\n    aggregate: {n: count()}\n    keepMax: n", ""},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: count(), s: sum(x)}\n    keepMax: m", `keepMax: names one of this window's aggregates (n, s), got "m"`},
		{"    window: {type: session, gap: 1s}\n    aggregate: {n: count()}\n    keepMax: n", "session windows end at different times for each key"},
		{"    window: {type: tumbling, size: 1s}\n    aggregate: {n: count()}\n    time: processing\n    keepMax: n", "keepMax: needs event time"},
	} {
		err := compile(c.spec)
		if c.want == "" {
			require.NoError(t, err, c.spec)
			continue
		}
		require.ErrorContains(t, err, c.want, c.spec)
	}
	// An event-time window needs event time on its sources.
	_, err := engine.Compile(reg, "w.yaml", []byte(`
name: w
operators:
  - {uid: src, type: test-events, n: 10}
  - {uid: win, type: window, from: [src], window: {type: tumbling, size: 1s}, aggregate: {n: count()}}
  - {uid: out, type: test-collect, from: [win], name: x}
`), engine.Defaults{})
	require.ErrorContains(t, err, `source "src" declares no eventTime`)
	// A side output an operator does not have.
	_, err = engine.Compile(reg, "w.yaml", []byte(`
name: w
operators:
  - {uid: src, type: test-events, n: 10, eventTime: {timestamp: ts}}
  - {uid: win, type: window, from: [src], window: {type: tumbling, size: 1s}, aggregate: {n: count()}}
  - {uid: out, type: test-collect, from: [win], name: x}
  - {uid: early, type: test-collect, from: [win.early], name: y}
`), engine.Defaults{})
	require.ErrorContains(t, err, `operator "win" (type window) has no side output "early" (it has: late)`)
}

// Processing-time windows: records go to the window of the wall clock at
// their arrival; at the end of a bounded input the open ones fire. Each
// record is in size/slide windows, each window fires once.
func TestProcessingTimeWindows(t *testing.T) {
	for _, c := range []struct {
		window    string
		size, per int64
	}{
		{"{type: tumbling, size: 100ms}", 100, 1},
		{"{type: sliding, size: 200ms, slide: 100ms}", 200, 2},
	} {
		t.Run(c.window, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			j := runtimetest.Start(t, fmt.Sprintf(`
name: proc
operators:
  - {uid: src, type: test-events, n: 3000, step: 1, keys: 3, perPoll: 50, pause: 5ms}
  - {uid: byKey, type: keyBy, from: [src], expr: user}
  - uid: win
    type: window
    from: [byKey]
    time: processing
    window: %s
    aggregate: {n: count()}
  - {uid: out, type: test-collect, from: [win], name: %s, parallelism: 1}
`, c.window, name), runtimetest.Options{Types: testTypes})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
			total := int64(0)
			windows := map[string]bool{}
			for _, v := range runtimetest.Values(name) {
				var r struct {
					Key                    string
					WindowStart, WindowEnd int64
					N                      int64
				}
				require.NoError(t, json.Unmarshal([]byte(v), &r), v)
				require.Equal(t, c.size, r.WindowEnd-r.WindowStart)
				require.Zero(t, r.WindowStart%100)
				id := fmt.Sprint(r.Key, r.WindowStart)
				require.False(t, windows[id], "window %s fired twice", id)
				windows[id] = true
				total += r.N
			}
			require.Equal(t, 3000*c.per, total, "every record in exactly %d windows", c.per)
			require.Greater(t, len(windows), 3, "the records spread over several windows of the clock")
		})
	}
}

// stop --drain ends the input: the final watermark fires every open window
// before the job finishes.
func TestStopDrainFiresOpenWindows(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: drain
watermarkInterval: 2ms
checkpointing: {interval: 1h}
operators:
  - {uid: src, type: test-events, n: 1000000, step: 7, block: 40, keys: 13, perPoll: 100, pause: 2ms, eventTime: {timestamp: ts, maxOutOfOrderness: 280ms}}
  - {uid: byKey, type: keyBy, from: [src], expr: user}
  - uid: win
    type: window
    from: [byKey]
    window: {type: tumbling, size: 1s}
    aggregate: {n: count()}
  - {uid: out, type: test-collect, from: [win], name: %s, parallelism: 1}
`, name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), SavepointsDir: t.TempDir()})
	waitRead(t, j, 5000)
	_, _, err := j.Stop("", true)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second))
	var read, counted int64
	for _, op := range j.Info().Operators {
		if op.UID == "src" {
			read = op.RecordsOut
		}
	}
	for _, v := range runtimetest.Values(name) {
		var r struct{ N int64 }
		require.NoError(t, json.Unmarshal([]byte(v), &r))
		counted += r.N
	}
	require.Greater(t, read, int64(0))
	require.Equal(t, read, counted, "every record read is in a fired window")
}
