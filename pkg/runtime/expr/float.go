package expr

import (
	"math"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/internal/itoa"
)

// appendFloat appends f as strconv.AppendFloat(dst, f, 'g', -1, 64) does
// (the records' form of a float, AppendJSON). A float that is a short
// decimal (0.908 * price: 315580.848) takes a fast path: the decimal m ×
// 10^-s with the fewest places s that reads back as f. Below 2^50 that
// decimal is the only one with so few digits within half an ulp of f, so
// it is the shortest representation strconv would find; everything else
// goes to strconv. This was a third of what q1's currency conversion
// added to q0's projection.
func appendFloat(dst []byte, f float64) []byte {
	a := math.Abs(f)
	if !(a >= 1e-4 && a < 1<<50) { // also NaN
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	}
	// The most places that keep a × 10^s below 2^50, rounded to an
	// integer m; the division (exact to the last bit) checks that
	// m × 10^-s reads back as a, and a float that is not a short decimal
	// fails it in one try. Then as few places as m's trailing zeros allow.
	s := maxPlaces
	for a*pow10f[s] >= 1<<50 {
		s--
	}
	m := uint64(a*pow10f[s] + 0.5)
	if m == 0 || float64(m)/pow10f[s] != a {
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	}
	for s >= 4 && m%10000 == 0 {
		m, s = m/10000, s-4 // the same value: it reads back as a too
	}
	for s > 0 && m%10 == 0 {
		m, s = m/10, s-1
	}
	if f < 0 {
		dst = append(dst, '-')
	}
	return appendDecimal(dst, m, s)
}

// maxPlaces bounds the places of the decimals the fast path writes; a
// float with more (1120.4720000000002: a product that rounded away from
// a short decimal) goes to strconv.
const maxPlaces = 8

// pow10f are the scales (exact as float64s).
var pow10f = [maxPlaces + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// appendDecimal appends m × 10^-s (m > 0, and m has no trailing zero
// when s > 0) as strconv's shortest %g writes its digits: %e when the
// decimal exponent is below -4 or at least 6 (Go's rule for the shortest
// form), %f otherwise.
func appendDecimal(dst []byte, m uint64, s int) []byte {
	nd := itoa.Digits(m)
	dp := nd - s                             // the decimal point's place among the digits
	if exp := dp - 1; exp < -4 || exp >= 6 { // d.ddde±XX
		for nd > 1 && m%10 == 0 {
			m, nd = m/10, nd-1 // s == 0: 1000000 is 1e+06
		}
		l := len(dst)
		dst = append(dst, make([]byte, nd+1)...)
		b := dst[l:]
		itoa.PutUint(b[1:], m)
		b[0] = b[1]
		if nd > 1 {
			b[1] = '.'
		} else {
			dst = dst[:l+1]
		}
		sign := byte('+')
		if exp < 0 {
			sign, exp = '-', -exp
		}
		dst = append(dst, 'e', sign)
		if exp < 10 {
			dst = append(dst, '0')
		}
		return itoa.AppendInt(dst, int64(exp))
	}
	switch {
	case dp <= 0: // 0.00ddd
		dst = append(dst, "0."...)
		for ; dp < 0; dp++ {
			dst = append(dst, '0')
		}
		return appendUint(dst, m, nd)
	case s == 0: // an integer
		return appendUint(dst, m, nd)
	}
	l := len(dst) // ddd.ddd
	dst = append(dst, make([]byte, nd+1)...)
	b := dst[l:]
	itoa.PutUint(b[dp+1:], m%itoa.Pow10(s))
	itoa.PutUint(b[:dp], m/itoa.Pow10(s))
	b[dp] = '.'
	return dst
}

// appendUint appends m, of nd digits.
func appendUint(dst []byte, m uint64, nd int) []byte {
	l := len(dst)
	dst = append(dst, make([]byte, nd)...)
	itoa.PutUint(dst[l:], m)
	return dst
}
