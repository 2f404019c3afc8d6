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
	f := fieldsSink{data: data, want: want}
	var buf [16]found
	got, ok := scanMembers(data, nil, &f, buf[:0])
	if !ok {
		if f.err != nil {
			return f.err
		}
		return errNotObject
	}
	// The members whose value does not decode, unless a later one of the
	// same name does (the native path never reads an overwritten one
	// either: the two agree).
	var bad []badMember
	for _, m := range got {
		key := string(data[m.keyAt+1 : m.keyEnd-1])
		if m.field == 1 { // escaped: decoded again (lookup did it once and it did not fail)
			_ = json.Unmarshal(data[m.keyAt:m.keyEnd], &key)
		}
		if len(bad) > 0 {
			bad = slices.DeleteFunc(bad, func(b badMember) bool { return b.key == key })
		}
		v, err := decodeValue(data[m.valAt:m.valEnd])
		if err != nil {
			bad = append(bad, badMember{key, err})
		}
		dst[key] = v // a later member of the same name overwrites it
	}
	if len(bad) > 0 {
		return bad[0].err
	}
	return nil
}

// fieldsSink is fields' side of scanMembers: field 0 is a member wanted,
// 1 one wanted whose key is escaped, -1 one skipped.
type fieldsSink struct {
	data []byte
	want map[string]bool
	err  error // what stopped the scan
}

type badMember struct {
	key string
	err error
}

func (f *fieldsSink) lookup(key []byte, escaped bool, keyAt int) (int, string, bool) {
	if !escaped {
		// want[string(key)] does not allocate: most members are skipped.
		if f.want != nil && !f.want[string(key)] {
			return -1, "", true
		}
		return 0, "", true
	}
	var k string
	if f.err = json.Unmarshal(f.data[keyAt:keyAt+len(key)+2], &k); f.err != nil {
		return 0, "", false
	}
	if f.want != nil && !f.want[k] {
		return -1, "", true
	}
	return 1, "", true
}

// keySink is a reader of records through scanMembers. lookup is called
// for each key no remembered shape gives (keyAt: the index of its opening
// quote, escaped: key holds an escape, not decoded): it returns the field
// the member is (-1: none, skipped) and the key as a string that outlives
// the record, for the shapes to remember (an escaped key is not
// remembered); !ok stops the scan.
type keySink interface {
	lookup(key []byte, escaped bool, keyAt int) (field int, remember string, ok bool)
}

// found is one member of a field that scanMembers met, as offsets into
// the record (no pointers: appending one costs no write barrier).
type found struct {
	field         int // as the sink's lookup or the shape gave it
	keyAt, keyEnd int // the key's opening quote, and the index after its closing one
	valAt, valEnd int // its value's raw JSON
	canon         bool
	// canon: the value is canonical (see canonical): an integer without a
	// sign or leading zeros of at most 18 digits, or a plain string (see
	// plain).
}

// scanMembers reads the top-level members of the JSON object data: the
// one scanner of records in this package. fields (the VM's map of a
// record), native.scanRow (the fast path's raw members) and
// RowSet.Project (a join side's kept members) all read through it, so
// they agree on what a record holds. Its contract:
//
//   - a record is read whole, to its closing brace: no member is missed,
//     and anything after the object but white space makes it not one;
//   - each member of a field (sink.lookup's, or a remembered shape's) is
//     appended to out, in order, a duplicated key as often as it appears:
//     readers keep the last (encoding/json's rule, the last wins);
//   - it checks the structure (strings, brackets, separators) but not the
//     grammar of values no reader decodes: a malformed number or a raw
//     control character in a string nobody reads passes (decodeValue and
//     the native path check what they read);
//   - keys are handed over raw; an escaped key is flagged, not decoded.
//
// It is fast where records are. The members written as the ones at their
// positions in a record before (set: the few member orders met last, may
// be nil), compactly, with integer or plain string values, are read by
// fastScan: a key costs three masked word comparisons, digits and a
// string's bytes are looked at sixteen an instruction (SSE2 on amd64),
// and nothing is called per member; the members of fields are written to
// out as offsets, read after the scan (a call per member spilled the
// loop's registers). Anything else (a key met for the first time, white
// space, an escape, a nested value, a float) takes the general loop
// below, member by member, and fastScan again after it.
// !ok: data is not a JSON object, or the sink stopped the scan.
func scanMembers(data []byte, set *shapeSet, sink keySink, out []found) ([]found, bool) {
	i := 1
	if len(data) < 2 || data[0] != '{' || data[1] <= ' ' { // compact JSON is `{"`
		if i = skipSpace(data, 0); i >= len(data) || data[i] != '{' {
			return out, false
		}
		i = skipSpace(data, i+1)
	}
	if i < len(data) && data[i] == '}' {
		return out, skipSpace(data, i+1) == len(data)
	}
	var shape []memberShape
	if set != nil {
		shape, set.fresh = set.shapes[set.cur], false
	}
	for pos := 0; ; pos++ {
		// The members written as the shape's, compactly: fastScan, with
		// room in out for the ones of fields.
		for pos < len(shape) {
			if cap(out)-len(out) < 4 {
				out = slices.Grow(out, 8)
			}
			next, nextPos, n, end := fastScan(data, i, pos, shape, out[len(out):cap(out)])
			out, i, pos = out[:len(out)+n], next, nextPos
			if end {
				return out, skipSpace(data, i+1) == len(data)
			}
			if len(out) < cap(out) {
				break // not for want of room
			}
		}
		if i < len(data) && data[i] <= ' ' { // fastScan stops at a space after a comma
			i = skipSpace(data, i)
		}
		// Any other member: its key (the shape's near the end of data,
		// or another shape's, or the sink's), then its value.
		keyAt := i
		f, keyEnd, sh, ok := scanKey(data, i, pos, set, shape, sink)
		if !ok {
			return out, false
		}
		shape = sh
		if i = keyEnd; i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		if i >= len(data) || data[i] != ':' {
			return out, false
		}
		if i++; i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		vEnd, canon, err := scanScalar(data, i)
		if err != nil {
			return out, false
		}
		if f >= 0 {
			out = append(out, found{field: f, keyAt: keyAt, keyEnd: keyEnd, valAt: i, valEnd: vEnd, canon: canon})
		}
		if i = vEnd; i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
		if i >= len(data) {
			return out, false
		}
		if data[i] != ',' {
			if data[i] == '}' {
				return out, skipSpace(data, i+1) == len(data)
			}
			return out, false
		}
		if i++; i < len(data) && data[i] <= ' ' {
			i = skipSpace(data, i)
		}
	}
}

// scanFast is scanMembers' answer for data when fastScan alone reads it
// whole, from its first member to its closing brace, the last byte: a
// compact record in the order of the one before (set's current shape),
// with room in out for the members of its fields. !ok: it does not, and
// scanMembers must. The readers of every record try it first: it spares
// them scanMembers' own cost, a third of a Nexmark filter's.
func scanFast(data []byte, set *shapeSet, out []found) ([]found, bool) {
	shape := set.shapes[set.cur]
	if len(shape) == 0 || len(data) < 2 || data[0] != '{' || data[1] != '"' {
		return out, false
	}
	next, _, n, end := fastScan(data, 1, 0, shape, out[len(out):cap(out)])
	return out[:len(out)+n], end && next == len(data)-1
}

// scanScalar is scanValue that also tells whether the value is canonical
// (see canonical: an integer without a sign or leading zeros of at most
// 18 digits, or a plain string), as scanMembers hands it over, so that
// copying it into an object (appendObject) costs no second pass.
func scanScalar(data []byte, i int) (end int, canon bool, err error) {
	if i < len(data) {
		if c := data[i]; c-'0' < 10 {
			j := i + 1
			for j < len(data) && data[j]-'0' < 10 {
				j++
			}
			if j < len(data) && (data[j] == ',' || data[j] == '}') {
				return j, j-i <= 18 && (c != '0' || j-i == 1), nil
			}
		} else if c == '"' {
			if end, ok := plainString(data, i); ok {
				return end, true, nil
			}
		}
	}
	end, err = scanValue(data, i)
	return end, false, err
}

// scanKey is scanMembers' key at data[i] (pos: its position) when the
// current shape does not give it in words: the shape's key too near the
// end of data for them, another shape's (a record of another kind), or
// the sink's lookup, remembered in set. It returns the member's field,
// the index after the key's closing quote and the shape to go on with.
func scanKey(data []byte, i, pos int, set *shapeSet, shape []memberShape, sink keySink) (f, keyEnd int, _ []memberShape, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, 0, shape, false
	}
	if pos < len(shape) {
		if e := shape[pos].at(data, i); e > 0 {
			return shape[pos].field, e, shape, true
		}
		if sh, e, ok := set.other(data, i, pos); ok {
			return sh.field, e, set.shapes[set.cur], true
		}
	}
	// Past the end of the shape the record's member extends it.
	e, escaped, err := scanString(data, i)
	if err != nil {
		return 0, 0, shape, false
	}
	f, key, ok := sink.lookup(data[i+1:e-1], escaped, i)
	if !ok {
		return 0, 0, shape, false
	}
	if set != nil && !escaped {
		set.record(pos, key, f)
		shape = set.shapes[set.cur]
	}
	return f, e, shape, true
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
