// Package itoa formats integers into byte slices.
package itoa

import (
	"math/bits"
	"strconv"
)

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does,
// but writes the digits in place, two at a time, when b has room for
// them (arena slices and reused buffers do): strconv formats into a
// buffer of its own and copies it, and the three integers of a Nexmark
// bid were a tenth of formatting it.
func AppendInt(b []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(b, v, 10)
	}
	u := uint64(v)
	n := Digits(u)
	l := len(b)
	if cap(b)-l < n {
		return strconv.AppendInt(b, v, 10)
	}
	b = b[:l+n]
	PutUint(b[l:], u)
	return b
}

// Digits is the number of decimal digits of u (1 for 0).
func Digits(u uint64) int {
	n := bits.Len64(u) * 1233 >> 12 // log10(2) ≈ 1233/4096: the digits, or one too few
	if n < len(pow10u) && u >= pow10u[n] {
		n++
	}
	return max(n, 1)
}

// PutUint writes the last len(d) decimal digits of u into d, with leading
// zeros if u has fewer, two at a time.
func PutUint(d []byte, u uint64) {
	i := len(d)
	for i >= 2 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		d[i], d[i+1] = pairs[r], pairs[r+1]
		u = q
	}
	if i == 1 {
		d[0] = byte('0' + u%10)
	}
}

// Pow10 is 10^n, for n in [0, 19].
func Pow10(n int) uint64 { return pow10u[n] }

var pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19}

// pairs is "00" to "99".
const pairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"
