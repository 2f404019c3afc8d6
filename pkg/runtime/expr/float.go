package expr

import (
	"math"
	"strconv"
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
	for s > 0 && m%10 == 0 {
		m, s = m/10, s-1 // the same value: it reads back as a too
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
	nd := 1
	for nd < len(pow10u) && m >= pow10u[nd] {
		nd++
	}
	dp := nd - s                    // the decimal point's place among the digits
	if dp > 0 && dp <= 6 && s > 0 { // ddd.ddd, written from the right
		l := len(dst)
		dst = append(dst, make([]byte, nd+1)...)
		b := dst[l:]
		for i := nd; i > dp; i-- {
			b[i], m = byte('0'+m%10), m/10
		}
		b[dp] = '.'
		for i := dp - 1; i >= 0; i-- {
			b[i], m = byte('0'+m%10), m/10
		}
		return dst
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], m, 10)
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1] // s == 0: 1000 is "1" with dp 4
	}
	if exp := dp - 1; exp < -4 || exp >= 6 {
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(append(dst, '.'), digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst, exp = append(dst, '-'), -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if dp <= 0 {
		dst = append(dst, "0."...)
		for ; dp < 0; dp++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits...) // an integer: s == 0
	for n := len(digits); n < dp; n++ {
		dst = append(dst, '0')
	}
	return dst
}

var pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}
