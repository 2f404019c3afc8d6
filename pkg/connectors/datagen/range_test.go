package datagen

import (
	"math"
	"sort"
	"strconv"
	"testing"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/stretchr/testify/require"
)

// The sequence never wraps past the int64 range: a count that would
// overflow start + count is refused (it used to finish with 0 records),
// and an unbounded sequence near the top ends at math.MaxInt64 - 1 at any
// parallelism instead of continuing from math.MinInt64.
func TestSequenceAtTheEndOfTheInt64Range(t *testing.T) {
	const top = math.MaxInt64
	for _, tc := range []struct {
		name         string
		start, count int64
		par          int
		want         []int64
	}{
		{"bounded up to the last index", top - 3, 2, 2, []int64{top - 3, top - 2}},
		{"bounded, all but the last index", top - 3, 3, 3, []int64{top - 3, top - 2, top - 1}},
		{"unbounded near the top", top - 3, -1, 2, []int64{top - 3, top - 2, top - 1}},
		{"unbounded from the top", top, -1, 4, nil},
		{"empty at the top", top, 0, 2, nil},
		{"from the bottom", math.MinInt64, 3, 2, []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt64 + 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			for _, s := range subtasks(t, formatRaw, tc.start, tc.count, tc.par, nil) {
				for _, v := range drain(t, s, 100) {
					i, err := strconv.ParseInt(v, 10, 64)
					require.NoError(t, err)
					got = append(got, i)
				}
			}
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			require.Equal(t, tc.want, got)
		})
	}
}

func TestRangeChecks(t *testing.T) {
	for _, tc := range []struct{ opts, want string }{
		{"count: 9223372036854775807", "operators[0].count: start 1 + count 9223372036854775807 goes past the largest index 9223372036854775806: at most 9223372036854775806 records from this start"},
		{"start: 9223372036854775807, count: 1", "operators[0].count: start 9223372036854775807 + count 1 goes past the largest index"},
		{"rate: 10000000000", "operators[0].rate: must be between 0 (unlimited) and 1e+09 records/s, got 1e+10"},
		{"rate: .nan", "operators[0].rate: expected a number, got"},
		{"rate: -.inf", "operators[0].rate: expected a number, got"},
	} {
		_, err := engine.Compile(testRegistry, "t.yaml", []byte("name: r\noperators:\n  - {uid: gen, type: datagen, "+tc.opts+"}\n  - {uid: out, type: test-collect, from: [gen], name: x}\n"), engine.Defaults{})
		require.ErrorContains(t, err, tc.want, tc.opts)
	}
	_, err := engine.Compile(testRegistry, "t.yaml", []byte("name: r\noperators:\n  - {uid: gen, type: datagen, count: 9223372036854775806}\n  - {uid: out, type: test-collect, from: [gen], name: x}\n"), engine.Defaults{})
	require.NoError(t, err, "the largest count from start 1")
}
