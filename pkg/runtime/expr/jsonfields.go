package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

var errNotObject = errors.New("not a JSON object")

// fields extracts the top-level members of the JSON object data named in
// want (all members when want is nil) into dst, without decoding the rest.
// Integers become int (so % and integer comparison work), other numbers
// float64, strings string, true/false bool, null nil; nested objects and
// arrays are decoded with encoding/json. A value that is not a JSON object
// is an error. Every object encoding/json accepts gives the same members
// (FuzzJSONFields checks it); the scanner is more lenient than
// encoding/json about what it skips (a malformed number or a raw control
// character in a member it was not asked for), and stops reading once it
// has every member of want (the rest of the value is not checked then).
func fields(data []byte, want map[string]bool, dst map[string]any) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errNotObject
	}
	i = skipSpace(data, i+1)
	found := 0
	if i < len(data) && data[i] == '}' {
		if skipSpace(data, i+1) != len(data) {
			return errNotObject
		}
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return errNotObject
		}
		keyStart := i + 1
		end, escaped, err := scanString(data, i)
		if err != nil {
			return err
		}
		keyRaw := data[keyStart : end-1]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return errNotObject
		}
		i = skipSpace(data, i+1)
		vEnd, err := scanValue(data, i)
		if err != nil {
			return err
		}
		var key string
		if escaped {
			if err := json.Unmarshal(data[keyStart-1:end], &key); err != nil {
				return err
			}
		}
		// want[string(keyRaw)] does not allocate: most members are skipped.
		if want == nil || (!escaped && want[string(keyRaw)]) || (escaped && want[key]) {
			if !escaped {
				key = string(keyRaw)
			}
			v, err := decodeValue(data[i:vEnd])
			if err != nil {
				return err
			}
			dst[key] = v
			if found++; want != nil && found == len(want) {
				return nil // every wanted member read: the rest is not scanned
			}
		}
		i = skipSpace(data, vEnd)
		if i >= len(data) {
			return errNotObject
		}
		if data[i] == '}' {
			if skipSpace(data, i+1) != len(data) {
				return errNotObject // trailing bytes after the object
			}
			return nil
		}
		if data[i] != ',' {
			return errNotObject
		}
		i = skipSpace(data, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index after the closing quote of the string that
// starts at b[i] == '"', and whether it contains escapes.
func scanString(b []byte, i int) (int, bool, error) {
	// Member names and most values are short: a plain loop first, then
	// IndexByte (vectorized, but each call costs) for long strings.
	j := i + 1
	for end := min(len(b), j+24); j < end; j++ {
		switch b[j] {
		case '"':
			return j + 1, false, nil
		case '\\':
			return scanEscaped(b, j)
		}
	}
	for j < len(b) {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			break
		}
		q += j
		if bs := bytes.IndexByte(b[j:q], '\\'); bs >= 0 {
			return scanEscaped(b, j+bs)
		}
		return q + 1, false, nil
	}
	return 0, false, errNotObject
}

// scanEscaped is scanString from the backslash at b[j] on.
func scanEscaped(b []byte, j int) (int, bool, error) {
	for j < len(b) {
		switch b[j] {
		case '\\':
			j += 2
		case '"':
			return j + 1, true, nil
		default:
			j++
		}
	}
	return 0, false, errNotObject
}

// scalarEnd marks the bytes that end a number, true, false or null.
var scalarEnd = [256]bool{',': true, '}': true, ']': true, ' ': true, '\n': true, '\t': true, '\r': true}

// scanValue returns the index after the JSON value starting at b[i].
func scanValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotObject
	}
	switch b[i] {
	case '"':
		// Values are longer than names: straight to IndexByte. A quote
		// not right after a backslash is the end whatever escapes come
		// before it (an escaped quote is preceded by one); callers that
		// read the string check it for escapes themselves.
		if q := bytes.IndexByte(b[i+1:], '"'); q >= 0 && (q == 0 || b[i+q] != '\\') {
			return i + 2 + q, nil
		}
		end, _, err := scanString(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _, err := scanString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errNotObject
	default:
		j := i
		for j < len(b) && !scalarEnd[b[j]] {
			j++
		}
		if j == i {
			return 0, errNotObject
		}
		return j, nil
	}
}

// digits8 reports whether the eight bytes of x are all ASCII digits: each
// byte's high nibble is 3 and adding 6 to it does not carry into it.
func digits8(x uint64) bool {
	const hi, six = 0xF0F0F0F0F0F0F0F0, 0x0606060606060606
	return x&hi == 0x3030303030303030 && (x+six)&hi == 0x3030303030303030
}

// parse8 is the value of the eight ASCII digits of x (digits8), the first
// in its lowest byte: pairs, then fours, then all eight, each step in
// every lane at once.
func parse8(x uint64) uint64 {
	x -= 0x3030303030303030
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	return (x*10000 + x>>32) & 0xFFFFFFFF
}

func decodeValue(raw []byte) (any, error) {
	switch raw[0] {
	case '"':
		for _, c := range raw[1 : len(raw)-1] {
			if c == '\\' {
				var s string
				err := json.Unmarshal(raw, &s)
				return s, err
			}
		}
		return string(raw[1 : len(raw)-1]), nil
	case 't':
		if string(raw) == "true" {
			return true, nil
		}
	case 'f':
		if string(raw) == "false" {
			return false, nil
		}
	case 'n':
		if string(raw) == "null" {
			return nil, nil
		}
	case '{', '[':
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			if rerr := checkNumbers(raw); rerr != nil {
				return nil, rerr
			}
			return nil, err
		}
		return Normalize(v), nil
	default:
		if n, ok := parseInt(raw); ok {
			return n, nil
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			if rerr := numberRange(raw); rerr != nil {
				return nil, rerr // 1e400: say so, not "not a JSON object"
			}
			return nil, errNotObject
		}
		return f, nil
	}
	return nil, errNotObject
}

// parseInt parses a JSON integer without allocating.
func parseInt(b []byte) (int, bool) {
	neg := false
	i := 0
	if len(b) > 0 && b[0] == '-' {
		neg, i = true, 1
	}
	if i >= len(b) || len(b)-i > 18 {
		return 0, false
	}
	n := 0
	for ; len(b)-i >= 8; i += 8 { // times are 13 digits: eight at a time
		x := le64(b[i:])
		if !digits8(x) {
			return 0, false
		}
		n = n*1e8 + int(parse8(x))
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Normalize turns float64 values that are whole numbers into int, as the
// fast path does, so nested and top-level numbers behave alike.
func Normalize(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int(x)) && x < 1e15 && x > -1e15 {
			return int(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = Normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = Normalize(e)
		}
	}
	return v
}
