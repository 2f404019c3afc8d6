package engine_test

import (
	"fmt"
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
