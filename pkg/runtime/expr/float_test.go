package expr

import (
	"math"
	"strconv"
	"testing"
)

// appendFloat writes what strconv writes: short decimals of every scale
// and exponent, their neighbours one ulp away, products like q1's,
// integers, the edges of the fast path, and random bit patterns.
func TestAppendFloatIsStrconvs(t *testing.T) {
	cases := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-4, 9.99e-5, 1e-5, 123456, 999999, 1e6, 1234567, 1e15, 1 << 50, 1<<50 - 1,
		1 << 53, 1e21, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 100, 1e300, -1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), 315580.848, 90.8, 9.08e7, 908, 0.908, 0.0908, 0.00908, 0.000908}
	for p := 100; p < 100_000_000; p = p*7/3 + 1 {
		cases = append(cases, 0.908*float64(p), float64(p)/100, float64(p)*1.1)
	}
	for e := -20; e <= 20; e++ {
		for _, m := range []float64{1, 1.5, 12.25, 123.456, 7.000001, 9.999999} {
			cases = append(cases, m*math.Pow(10, float64(e)))
		}
	}
	x := uint64(11)
	for range 200_000 {
		x = x*6364136223846793005 + 1442695040888963407
		cases = append(cases, math.Float64frombits(x), float64(x>>40)/1000, float64(int64(x)>>44)/float64(uint64(1)<<(x%12)))
	}
	for _, f := range cases {
		for _, g := range []float64{f, math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1))} {
			want := strconv.AppendFloat([]byte("x"), g, 'g', -1, 64)
			if got := appendFloat([]byte("x"), g); string(got) != string(want) {
				t.Fatalf("%v (%#x): %s, strconv %s", g, math.Float64bits(g), got, want)
			}
		}
	}
}

func BenchmarkAppendFloat(b *testing.B) {
	buf := make([]byte, 0, 32)
	for i := 0; i < b.N; i++ {
		buf = appendFloat(buf[:0], 0.908*float64(100+i%100_000))
	}
}

// BenchmarkAppendFloatPrices is q1's euro prices, three places: a
// third of Nexmark's prices are 10^6 euros or more, written as %e.
func BenchmarkAppendFloatPrices(b *testing.B) {
	buf := make([]byte, 0, 32)
	for i := 0; i < b.N; i++ {
		buf = appendFloat(buf[:0], float64(908*(100+(i*7919)%100_000_000))/1000)
	}
}

// BenchmarkStrconvAppendFloat is BenchmarkAppendFloat's baseline, in the
// same run.
func BenchmarkStrconvAppendFloat(b *testing.B) {
	buf := make([]byte, 0, 32)
	for i := 0; i < b.N; i++ {
		buf = strconv.AppendFloat(buf[:0], 0.908*float64(100+i%100_000), 'g', -1, 64)
	}
}
