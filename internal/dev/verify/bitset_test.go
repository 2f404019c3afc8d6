package verify

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func collectRuns(s *bitset) []Range {
	var got []Range
	s.runs(func(r Range) { got = append(got, r) })
	return got
}

func TestBitsetRuns(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
		want   []Range
	}{
		{"empty", nil, nil},
		{"single", []int64{5}, []Range{{5, 5}}},
		{"word boundary", []int64{62, 63, 64, 65}, []Range{{62, 65}}},
		{"full word", rangeOf(64, 127), []Range{{64, 127}}},
		{"block boundary", rangeOf(65530, 65545), []Range{{65530, 65545}}},
		{"negative across zero", rangeOf(-70000, 3), []Range{{-70000, 3}}},
		{"sparse extremes", []int64{math.MinInt64, 0, math.MaxInt64}, []Range{{math.MinInt64, math.MinInt64}, {0, 0}, {math.MaxInt64, math.MaxInt64}}},
		{"holes", []int64{1, 2, 4, 200000, 200001}, []Range{{1, 2}, {4, 4}, {200000, 200001}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newBitset()
			for _, v := range tt.values {
				assert.False(t, s.add(v))
			}
			for _, v := range tt.values {
				assert.True(t, s.add(v), "second add of %d is a duplicate", v)
			}
			assert.Equal(t, tt.want, collectRuns(s))
		})
	}
}

// TestBitsetMatchesSort compares runs with a sort-based reference on random
// clustered values.
func TestBitsetMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		s := newBitset()
		seen := map[int64]bool{}
		for range 2000 {
			v := rng.Int64N(300_000) - 100_000
			assert.Equal(t, seen[v], s.add(v))
			seen[v] = true
		}
		var vals []int64
		for v := range seen {
			vals = append(vals, v)
		}
		slices.Sort(vals)
		var want []Range
		for _, v := range vals {
			if n := len(want); n > 0 && want[n-1].To+1 == v {
				want[n-1].To = v
				continue
			}
			want = append(want, Range{v, v})
		}
		assert.Equal(t, want, collectRuns(s))
	}
}

func rangeOf(from, to int64) []int64 {
	var vs []int64
	for v := from; v <= to; v++ {
		vs = append(vs, v)
	}
	return vs
}
