package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
)

var errNotObject = errors.New("not a JSON object")

// fields extracts the top-level members of the JSON object data named in
// want (all members when want is nil) into dst, without decoding the rest.
// Integers become int (so % and integer comparison work), other numbers
// float64, strings string, true/false bool, null nil; nested objects and
// arrays are decoded with encoding/json. A value that is not a JSON object
// is an error. It reads data with scanMembers, whose contract it keeps: a
// member named twice is the last one, as encoding/json reads it. Every
// object encoding/json accepts gives the same members (FuzzJSONFields
// checks it).
func fields(data []byte, want map[string]bool, dst map[string]any) error {
	f := fieldsSink{data: data, want: want, dst: dst}
	if !scanMembers(data, nil, &f) {
		if f.err != nil {
			return f.err
		}
		return errNotObject
	}
	if len(f.bad) > 0 {
		return f.bad[0].err
	}
	return nil
}

// fieldsSink is fields' side of scanMembers: field 0 is a member wanted
// (its key decoded into key), -1 one skipped.
type fieldsSink struct {
	data []byte
	want map[string]bool
	dst  map[string]any
	key  string
	err  error // what stopped the scan
	// bad: the members whose value does not decode, unless a later one of
	// the same name does (the native path never reads an overwritten one
	// either: the two agree).
	bad []badMember
}

type badMember struct {
	key string
	err error
}

func (f *fieldsSink) lookup(key []byte, escaped bool, keyAt, _ int) (int, bool) {
	if !escaped {
		// want[string(key)] does not allocate: most members are skipped.
		if f.want != nil && !f.want[string(key)] {
			return -1, true
		}
		f.key = string(key)
		return 0, true
	}
	if f.err = json.Unmarshal(f.data[keyAt:keyAt+len(key)+2], &f.key); f.err != nil {
		return 0, false
	}
	if f.want != nil && !f.want[f.key] {
		return -1, true
	}
	return 0, true
}

func (f *fieldsSink) member(_ int, m member) bool {
	if len(f.bad) > 0 {
		f.bad = slices.DeleteFunc(f.bad, func(b badMember) bool { return b.key == f.key })
	}
	v, err := decodeValue(m.val)
	if err != nil {
		f.bad = append(f.bad, badMember{f.key, err})
	}
	f.dst[f.key] = v // a later member of the same name overwrites it
	return true
}

// memberSink is a reader of records through scanMembers. lookup is called
// for each key the shape at its position does not give (pos: its
// position, keyAt: the index of its opening quote, escaped: key holds an
// escape, not decoded): it returns the field the member is (-1: none,
// skipped), and may remember the key in its shape; !ok stops the scan.
// member is called for each member of a field, in order, a key named
// twice twice; !ok stops the scan.
type memberSink interface {
	lookup(key []byte, escaped bool, keyAt, pos int) (field int, ok bool)
	member(field int, m member) bool
}

// member is one member scanMembers hands to its sink.
type member struct {
	key []byte // its key, without the quotes, escapes as written
	val []byte // its value's raw JSON
	// canon: val is canonical (see canonical): an integer without a
	// sign or leading zeros of at most 18 digits (then n is its value),
	// or a plain string (see plain).
	canon bool
	n     int
}

// scanMembers reads the top-level members of the JSON object data: the
// one scanner of records in this package. fields (the VM's map of a
// record), native.scanRow (the fast path's raw members) and
// RowSet.Project (a join side's kept members) all read through it, so
// they agree on what a record holds. Its contract:
//
//   - a record is read whole, to its closing brace: no member is missed,
//     and anything after the object but white space makes it not one;
//   - each member of a field is handed over, in order, a duplicated key
//     as often as it appears: sinks keep the last (encoding/json's rule,
//     the last wins);
//   - it checks the structure (strings, brackets, separators) but not the
//     grammar of values no sink decodes: a malformed number or a raw
//     control character in a string nobody reads passes (decodeValue and
//     the native path check what they read);
//   - keys are handed over raw; an escaped key is flagged, not decoded.
//
// It is fast where records are: one loop without calls for the members
// no sink reads (a call per value would cost more than the member: a
// Nexmark bid's are mostly numbers); a member whose `"key":` is the one
// met at its position in the record before (shape, may be nil) costs
// three word comparisons; an integer is scanned inline; a string with
// stopIndex (SSE2 on amd64), sixteen bytes an instruction.
// !ok: data is not a JSON object, or the sink stopped the scan.
func scanMembers(data []byte, shape []memberShape, sink memberSink) bool {
	i := 1
	if len(data) < 2 || data[0] != '{' || data[1] <= ' ' { // compact JSON is `{"`
		if i = skipSpace(data, 0); i >= len(data) || data[i] != '{' {
			return false
		}
		i = skipSpace(data, i+1)
	}
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	var m member
	for pos := 0; ; pos++ {
		// The member at this position last time, if this is it: its
		// `"key":` compared as three words (no backslash in the key: the
		// string ends at the quote after it).
		keyAt, keyEnd, f, hit := i, 0, -1, false
		if pos < len(shape) {
			// Written out here: as a method it would not be inlined.
			if sh := &shape[pos]; sh.plen > 0 && len(data)-i >= 24 {
				w := data[i : i+24 : i+24]
				if le64(w)&sh.mask[0] == sh.w[0] && le64(w[8:])&sh.mask[1] == sh.w[1] && le64(w[16:])&sh.mask[2] == sh.w[2] {
					f, hit, keyEnd = sh.field, true, i+sh.plen-1
					i += sh.plen
				}
			}
		}
		if !hit {
			if i >= len(data) || data[i] != '"' {
				return false
			}
			if pos < len(shape) { // near the end of data: too close for the words
				if sh := &shape[pos]; i+1+len(sh.key) < len(data) && data[i+1+len(sh.key)] == '"' && view(data[i+1:i+1+len(sh.key)]) == sh.key {
					f, hit, keyEnd = sh.field, true, i+2+len(sh.key)
				}
			}
			if !hit {
				e, escaped, err := scanString(data, i)
				if err != nil {
					return false
				}
				var ok bool
				if f, ok = sink.lookup(data[i+1:e-1], escaped, i, pos); !ok {
					return false
				}
				keyEnd = e
			}
			i = keyEnd
			if i < len(data) && data[i] <= ' ' {
				i = skipSpace(data, i)
			}
			if i >= len(data) || data[i] != ':' {
				return false
			}
			i++
		}
		// Compact JSON (no space around ':' and ',') is the common case:
		// one comparison each; skipSpace only where a byte is <= ' '.
		if i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		// An integer is scanned here, its value with it (the native
		// operand finds it decoded); a string with stopIndex (a url,
		// say): sooner than scanValue. Both tell whether the value is
		// canonical, so that copying it into an object (appendObject)
		// costs no second pass.
		vEnd, canon, n := 0, false, 0
		if i < len(data) && data[i]-'0' < 10 {
			j := i + 1
			n = int(data[i] - '0')
			for j < len(data) && data[j]-'0' < 10 {
				n = n*10 + int(data[j]-'0')
				j++
			}
			if j < len(data) && (data[j] == ',' || data[j] == '}') {
				vEnd, canon = j, j-i <= 18 && (data[i] != '0' || j-i == 1)
			}
		} else if i < len(data) && data[i] == '"' {
			vEnd, canon = plainString(data, i)
		}
		if vEnd == 0 {
			var err error
			if vEnd, err = scanValue(data, i); err != nil {
				return false
			}
		}
		if f >= 0 {
			m.key, m.val, m.canon, m.n = data[keyAt+1:keyEnd-1], data[i:vEnd], canon, n
			if !sink.member(f, m) {
				return false
			}
		}
		i = vEnd
		if i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		if i >= len(data) {
			return false
		}
		if data[i] == '}' {
			return skipSpace(data, i+1) == len(data)
		}
		if data[i] != ',' {
			return false
		}
		if i++; i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
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
