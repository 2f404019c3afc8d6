package expr

import "math/bits"

// stopIndex is the index in b of the first byte at or after from that
// ends a plain string's contents (see plain): a quote, a backslash, or a
// byte below 0x20 or from 0x7f; len(b) if there is none. 0 <= from <=
// len(b) (a negative from would read before b). b is the whole record,
// not only what follows from: the assembly reads its last sixteen bytes
// at once. On amd64 it is written in assembly (stopindex_amd64.s),
// sixteen bytes an instruction: a Nexmark bid's url and extra were a
// tenth of q0's and q1's CPU scanned eight at a time (stopIndexGo). Build
// with -tags purego for the Go version.

// stopIndexGo is stopIndex in Go, eight bytes at a time.
func stopIndexGo(b []byte, from int) int {
	j := from
	for ; j+8 <= len(b); j += 8 {
		if m := stopBytes(le64(b[j : j+8])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(b); j++ {
		if c := b[j]; c == '"' || c < 0x20 || c >= 0x7f || c == '\\' {
			return j
		}
	}
	return j
}

// stopBytes has the high bit set of each byte of word x that stopIndex
// stops at, and of some bytes after such a one (a borrow or carry goes up
// from it): the lowest is exact.
func stopBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, s := x^(lo*'"'), x^(lo*'\\')
	return ((x - lo*0x20) | (x + lo*0x01) | (q-lo)&^q | (s-lo)&^s | x) & hi
}
