package engine_test

import (
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestBoundedJobDeliversEveryRecordOnce(t *testing.T) {
	runtimetest.Reset("bounded")
	j := runtimetest.Start(t, `
name: bounded
operators:
  - {uid: gen, type: datagen, count: 10000, format: raw}
  - {uid: out, type: test-collect, from: [gen], name: bounded}
`, runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
	vals := runtimetest.Values("bounded")
	require.Len(t, vals, 10000)
	seen := map[string]bool{}
	for _, v := range vals {
		seen[v] = true
	}
	require.Len(t, seen, 10000)
	info := j.Info()
	require.Equal(t, int64(10000), info.Operators[0].RecordsOut)
	require.Equal(t, int64(10000), info.Operators[1].RecordsIn)
}

func TestKeyedCountAcrossParallelism(t *testing.T) {
	runtimetest.Reset("count")
	j := runtimetest.Start(t, `
name: counts
parallelism: 2
operators:
  - {uid: gen, type: datagen, count: 1000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 10"}
  - {uid: cnt, type: count, from: [key], parallelism: 3}
  - {uid: out, type: test-collect, from: [cnt], name: count, parallelism: 1}
`, runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
	vals := runtimetest.Values("count")
	require.Len(t, vals, 1000)
	final := map[string]int{}
	for _, v := range vals {
		var key string
		var n int
		_, err := fmt.Sscanf(v, `{"key":%q,"count":%d}`, &key, &n)
		require.NoError(t, err, v)
		if n > final[key] {
			final[key] = n
		}
	}
	keys := make([]string, 0)
	for k, n := range final {
		keys = append(keys, k)
		require.Equal(t, 100, n, "key %s", k)
	}
	sort.Strings(keys)
	require.Len(t, keys, 10)
	_ = strconv.Itoa
}
