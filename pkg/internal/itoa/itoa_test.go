package itoa

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// AppendInt writes what strconv writes, in place or not.
func TestAppendIntIsStrconvs(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, math.MaxInt64, math.MinInt64, -1, -10, 1 << 53}
	for p := int64(1); p > 0 && p < math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1, 2*p, 9*p+p-1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		vals = append(vals, r.Int64N(1<<uint(1+r.IntN(62))))
	}
	for _, v := range vals {
		want := strconv.AppendInt([]byte("x"), v, 10)
		require.Equal(t, string(want), string(AppendInt([]byte("x"), v)), "no room: %d", v)
		require.Equal(t, string(want), string(AppendInt(append(make([]byte, 0, 32), 'x'), v)), "in place: %d", v)
	}
}

// BenchmarkAppendInt formats Nexmark-like integers (ids, prices, times)
// into a buffer with room, with strconv as the baseline.
func BenchmarkAppendInt(b *testing.B) {
	vals := []int64{1000, 1001234, 347556, 1767225600000, 10, 123456789}
	buf := make([]byte, 0, 64)
	for _, c := range []struct {
		name string
		f    func([]byte, int64) []byte
	}{{"strconv", func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }}, {"itoa", AppendInt}} {
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				buf = c.f(buf[:0], vals[i%len(vals)])
			}
		})
	}
}

// Digits counts what strconv writes, PutUint writes the last digits with
// leading zeros, at every power of ten and between.
func TestDigitsAndPutUint(t *testing.T) {
	vals := []uint64{0, 1, 9, 10, math.MaxUint64, math.MaxUint64 / 10, 1e19, 1e19 - 1}
	for p := uint64(1); p <= 1e19 && p > 0; p *= 10 {
		vals = append(vals, p-1, p, p+1)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		vals = append(vals, r.Uint64()>>uint(r.IntN(64)))
	}
	for _, u := range vals {
		s := strconv.FormatUint(u, 10)
		require.Equal(t, len(s), Digits(u), "%d", u)
		for _, w := range []int{0, 1, 2, 3, len(s) - 1, len(s), len(s) + 3} {
			if w < 0 {
				continue
			}
			d := make([]byte, w)
			PutUint(d, u)
			want := fmt.Sprintf("%0*d", w, u)
			require.Equal(t, want[len(want)-w:], string(d), "%d in %d", u, w)
		}
	}
}
