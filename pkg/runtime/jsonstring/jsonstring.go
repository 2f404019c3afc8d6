// Package jsonstring writes JSON strings: the one writer every operator
// and connector that builds JSON by hand calls (window results and keys,
// expression results, count and reduce outputs, the file sink's records).
//
// The contract: Append(dst, s) appends exactly the bytes that
// encoding/json's Encoder with SetEscapeHTML(false) writes for the string
// s (without its newline), so the result is always valid JSON, whatever
// bytes s holds:
//
//   - '"' and '\\' are escaped with a backslash; \b, \f, \n, \r and \t
//     with their short escapes, the other bytes below 0x20 as \u00XX;
//   - each byte that does not start a valid UTF-8 sequence becomes
//     \ufffd (U+REPLACEMENT CHARACTER), so decoding gives back s when s
//     is valid UTF-8 and s with those bytes replaced otherwise;
//   - U+2028 and U+2029 are escaped (\u2028, \u2029), as encoding/json
//     does for JavaScript's sake;
//   - everything else, '<', '>', '&' and DEL included, is copied as it
//     is (encoding/json's HTML escaping is off: records are not HTML).
//
// FuzzAppend checks it byte for byte against encoding/json.
package jsonstring

import (
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// Append appends s to dst as a JSON string (see the package comment).
// Strings that need no escape, the common case, cost one pass of eight
// bytes at a time and one copy.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	i := plainEnd(s, 0)
	if i == len(s) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return appendEscaped(dst, s, i)
}

// AppendBytes is Append of the bytes b (not retained).
func AppendBytes(dst, b []byte) []byte {
	return Append(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

const hex = "0123456789abcdef"

// appendEscaped appends s, from whose byte i on something may need an
// escape (s[:i] needs none), and the closing quote.
func appendEscaped(dst []byte, s string, i int) []byte {
	start := 0 // s[start:i] is still to be copied as it is
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++ // DEL: plainEnd stops at it, JSON does not need it escaped
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendASCIIEscape(dst, c)
			i++
			start = i
			i = plainEnd(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendASCIIEscape appends the escape of an ASCII byte below 0x20 or a
// quote or backslash, as encoding/json writes it.
func appendASCIIEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// plainEnd is the index of the first byte of s at or after from that
// may need attention: a quote, a backslash, a byte below 0x20 or from
// 0x7f; len(s) if there is none. Eight bytes at a time: the strings
// written are often long (a Nexmark bid's url and extra).
func plainEnd(s string, from int) int {
	i := from
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // one bounds check
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if m := stopBytes(x); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// stopBytes has the high bit set of each byte of word x that plainEnd
// stops at, and of some bytes after such a one (a borrow or carry goes
// up from it): the lowest is exact.
func stopBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, s := x^(lo*'"'), x^(lo*'\\')
	return ((x - lo*0x20) | (x + lo*0x01) | (q-lo)&^q | (s-lo)&^s | x) & hi
}
