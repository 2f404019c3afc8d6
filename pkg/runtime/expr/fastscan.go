package expr

import "math/bits"

// fastScanGo is fastScan in Go: the reference the assembly is tested
// against (FuzzFastScan), and fastScan itself where there is no assembly.
//
// fastScan reads the members of data from the one at data[i] (the opening
// quote of its key, at position pos) as long as each is written as shape
// has it at its position (`"key":` as the shape's words), holds an integer
// (digits) or a string without escapes (for a field, a plain one: no
// byte below 0x20 or from 0x7f either, so that it is canonical), and is
// followed at once by a comma or the closing brace: the members of
// the records of a stream, written compactly in the order of the ones
// before. Each member of a field (shape's field >= 0) is written to
// out[n] (out's capacity: the members it has room for), with the value's
// canon (see found). It returns the index and position of the first
// member it did not read (its key's quote), the members written, and
// end: the object ended, next is the index of its closing brace.
// Anything else, it leaves to scanMembers: a member in another order or
// written otherwise, a value of another kind, a key within 24 bytes of
// the end of data (the words would read past it), or no room in out.
func fastScanGo(data []byte, i, pos int, shape []memberShape, out []found) (next, nextPos, n int, end bool) {
	out = out[:cap(out)]
	for ; pos < len(shape) && len(data)-i >= 24; pos++ {
		sh := &shape[pos]
		w := data[i : i+24 : i+24]
		if le64(w)&sh.mask[0] != sh.w[0] || le64(w[8:])&sh.mask[1] != sh.w[1] || le64(w[16:])&sh.mask[2] != sh.w[2] {
			break
		}
		v := i + sh.plen      // the value: plen < 24, so v < len(data)
		j, canon := v+1, true // its end
		if c := data[v]; c-'0' < 10 {
			for ; j+8 <= len(data); j += 8 {
				if m := nonDigits(le64(data[j : j+8])); m != 0 {
					j += bits.TrailingZeros64(m) >> 3
					break
				}
			}
			for j < len(data) && data[j]-'0' < 10 {
				j++
			}
			canon = j-v <= 18 && (c != '0' || j == v+1)
		} else if c == '"' {
			if sh.field >= 0 {
				j = stopIndexGo(data, j) // a field's string: plain, or not here
			} else {
				j = quoteOrBackslash(data, j) // what no reader reads may hold any byte
			}
			if j >= len(data) || data[j] != '"' {
				break
			}
			j++
		} else {
			break
		}
		if j >= len(data) || (data[j] != ',' && data[j] != '}') {
			break
		}
		if sh.field >= 0 {
			if n == len(out) {
				break
			}
			out[n] = found{field: sh.field, keyAt: i, keyEnd: v - 1, valAt: v, valEnd: j, canon: canon}
			n++
		}
		if data[j] == '}' {
			return j, pos, n, true
		}
		i = j + 1
	}
	return i, pos, n, false
}

// nonDigits has the high bit set of each byte of word x that is not an
// ASCII digit, and maybe of some bytes after such a one (a carry goes up
// from it): the lowest is exact. A digit is 0x30-0x39: high nibble 3, and
// adding 6 to it does not carry into the high nibble.
func nonDigits(x uint64) uint64 {
	const hi, six, three = 0xF0F0F0F0F0F0F0F0, 0x0606060606060606, 0x3030303030303030
	y := (x&hi ^ three) | ((x+six)&hi ^ three) // a byte of y is 0 iff a digit
	const lo7, top = 0x7F7F7F7F7F7F7F7F, 0x8080808080808080
	return ((y&lo7 + lo7) | y) & top // exact: y&lo7 + lo7 carries out of no byte
}

// quoteOrBackslash is the index of the first '"' or '\\' in b at or
// after j, len(b) if none.
func quoteOrBackslash(b []byte, j int) int {
	for ; j < len(b); j++ {
		if b[j] == '"' || b[j] == '\\' {
			return j
		}
	}
	return j
}
