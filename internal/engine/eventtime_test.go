package engine_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// Event-time timers fire when the watermark passes them, with the watermark
// already past their timestamp, and every one fires by the end of a bounded
// input (its final watermark).
func TestEventTimeTimersFireByWatermark(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: timers
parallelism: 2
watermarkInterval: 1ms
operators:
  - uid: gen
    type: datagen
    count: 2000
    rate: 20000
    format: json
    eventTime: {timestamp: "idx * 10", maxOutOfOrderness: 0s}
  - {uid: key, type: keyBy, from: [gen], expr: "string(idx %% 4)"}
  - {uid: timers, type: test-timer, from: [key], delay: 5ms}
  - {uid: out, type: test-collect, from: [timers], name: %s, parallelism: 1}
`, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	vals := runtimetest.Values(name)
	require.Len(t, vals, 2000, "one timer per record (timestamps are distinct per key)")
	beforeEnd := 0
	for _, v := range vals {
		var key string
		var ts, count, wm int64
		_, err := fmt.Sscanf(v, "%s %d count=%d wm=%d", &key, &ts, &count, &wm)
		require.NoError(t, err, v)
		require.GreaterOrEqual(t, wm, ts, "a timer fires once the watermark reached it: %s", v)
		if wm < 1<<62 {
			beforeEnd++
		}
	}
	require.Greater(t, beforeEnd, 100, "most timers fire as the watermark advances, not only at the end")
	info := j.Info()
	require.NotNil(t, info.Operators[0].OutputWatermark)
	sorted := append([]string(nil), vals...)
	sort.Strings(sorted)
	require.True(t, strings.HasPrefix(sorted[0], "0 "), sorted[0])
}

// A keyed operator that is a WatermarkListener hears each advance of its
// input watermark, in order, after the timers at or before it fired and
// before records of a later watermark, and MaxWatermark once at the end.
func TestWatermarkListenerHearsEachAdvance(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: watermarks
parallelism: 1
watermarkInterval: 1ms
operators:
  - uid: gen
    type: datagen
    count: 2000
    rate: 20000
    format: json
    eventTime: {timestamp: "idx * 10", maxOutOfOrderness: 0s}
  - {uid: key, type: keyBy, from: [gen], expr: "string(idx %% 4)"}
  - {uid: timers, type: test-timer, from: [key], delay: 5ms, watermarks: true}
  - {uid: out, type: test-collect, from: [timers], name: %s, parallelism: 1}
`, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	last := int64(math.MinInt64)
	var marks, timers int
	for _, v := range runtimetest.Values(name) {
		var w int64
		if _, err := fmt.Sscanf(v, "watermark %d", &w); err == nil {
			require.Greater(t, w, last, "each advance once, in order")
			last = w
			marks++
			continue
		}
		var key string
		var ts, count, wm int64
		_, err := fmt.Sscanf(v, "%s %d count=%d wm=%d", &key, &ts, &count, &wm)
		require.NoError(t, err, v)
		require.Greater(t, ts, last, "a timer fires before the watermark that passes it is heard: %s", v)
		timers++
	}
	require.Equal(t, 2000, timers)
	require.Equal(t, int64(math.MaxInt64), last, "the end of input is heard as MaxWatermark")
	require.Greater(t, marks, 10, "advances are heard as they happen, not only at the end")
}

// Processing-time and event-time timers are keyed state: they survive a
// savepoint, a cancel and a restore at another parallelism, and
// processing-time timers that came due while the job was down fire right
// after the restore.
func TestTimersSurviveSavepointAndRescale(t *testing.T) {
	for _, domain := range []string{"processing", "event"} {
		t.Run(domain, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			spec := func(par int) string {
				return fmt.Sprintf(`
name: timers-restore
parallelism: %d
watermarkInterval: 1ms
checkpointing: {interval: 1h}
operators:
  - uid: gen
    type: datagen
    rate: 400
    format: json
    eventTime: {timestamp: "idx * 10"}
  - {uid: key, type: keyBy, from: [gen], expr: "string(idx %% 5)"}
  - {uid: timers, type: test-timer, from: [key], delay: 1500ms, time: %s}
  - {uid: out, type: test-collect, from: [timers], name: %s, parallelism: 1}
`, par, domain, name)
			}
			sp := t.TempDir()
			j := runtimetest.Start(t, spec(2), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), SavepointsDir: sp})
			waitRead(t, j, 50) // a timer for each of the 5 keys
			path, _, err := j.Savepoint("")
			require.NoError(t, err)
			runtimetest.Cancel(t, 10*time.Second, j)
			before := len(runtimetest.Values(name))
			time.Sleep(1600 * time.Millisecond) // every timer of the savepoint is due now
			restored := time.Now()
			j = runtimetest.Start(t, spec(3), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
			// The restored timers fire while the job runs on: processing-time
			// ones at once (they are due), event-time ones as the watermark
			// passes them.
			keys := map[string]bool{}
			var fired []string
			runtimetest.WaitUntil(t, 10*time.Second, "timers of every key", func() bool {
				fired = runtimetest.Values(name)[before:]
				for _, v := range fired {
					keys[strings.Fields(v)[0]] = true
				}
				return len(keys) == 5
			})
			if domain == "processing" {
				require.Less(t, time.Since(restored), 1200*time.Millisecond, "due timers fire right after the restore, not after their delay again")
			}
			runtimetest.Cancel(t, 10*time.Second, j)
			for _, v := range fired {
				var key, d string
				var ts, count, wm int64
				_, err := fmt.Sscanf(v, "%s %d count=%d wm=%d %s", &key, &ts, &count, &wm, &d)
				require.NoError(t, err, v)
				require.Greater(t, count, int64(0), "the count state came back with the key: %s", v)
				if domain == "processing" && ts >= restored.UnixMilli() {
					continue // a timer of a record after the restore
				}
			}
		})
	}
}
