// Package csvrow converts between CSV rows (RFC 4180: fields separated by a
// one-byte delimiter, a field quoted with '"' when it holds the delimiter,
// a quote, CR or LF, a quote inside a quoted field doubled) and flinkgo's
// JSON records, one object per row, one member per column.
//
// The typing contract, shared by the file sink (writing) and the file
// source (reading), makes a flat JSON object survive a round trip with its
// types: a reader that infers types reads an unquoted field as null when
// it is empty, as a boolean when it is true or false, as a number when it
// is a JSON number, and as a string otherwise; a quoted field is always a
// string. So the writer quotes every string that would otherwise read as
// something else ("", "true", "12"). Objects and arrays are written as
// their JSON text and read back as strings holding it.
package csvrow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
)

// Parser reads CSV records from a byte buffer, one at a time, keeping the
// fields of the last one (unquoted, unescaped) until the next call.
type Parser struct {
	Delim  byte
	buf    []byte // the fields' bytes, back to back
	ends   []int  // end of field i in buf
	quoted []bool // field i was quoted
}

// ErrNeedMore is Next's answer when data ends inside a record and more
// may follow.
var ErrNeedMore = errors.New("csv record continues past the data read")

// Next parses the record at the start of data and returns the number of
// bytes it took, its terminating newline included (a CRLF ends a record
// too). atEOF says no more data follows: a last record without a newline
// ends there. ErrNeedMore: data ends inside the record and !atEOF. A
// quote inside an unquoted field is kept as it is (lenient, as most
// writers produce it); a quoted field must close before the data ends
// and be followed by the delimiter or the end of the record.
func (p *Parser) Next(data []byte, atEOF bool) (int, error) {
	p.buf, p.ends, p.quoted = p.buf[:0], p.ends[:0], p.quoted[:0]
	i := 0
	for {
		// One field from i.
		if i < len(data) && data[i] == '"' {
			j := i + 1
			for {
				k := bytes.IndexByte(data[j:], '"')
				if k < 0 {
					if atEOF {
						return 0, fmt.Errorf("a quoted field opened at byte %d is not closed before the end of the file", i)
					}
					return 0, ErrNeedMore
				}
				p.buf = append(p.buf, data[j:j+k]...)
				j += k + 1
				if j < len(data) && data[j] == '"' { // a doubled quote
					p.buf = append(p.buf, '"')
					j++
					continue
				}
				if j == len(data) && !atEOF {
					return 0, ErrNeedMore // "" may follow
				}
				break
			}
			p.ends, p.quoted = append(p.ends, len(p.buf)), append(p.quoted, true)
			i = j
			switch {
			case i == len(data):
				return i, nil
			case data[i] == p.Delim:
				i++
				continue
			case data[i] == '\n':
				return i + 1, nil
			case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
				return i + 2, nil
			case data[i] == '\r' && i+1 == len(data) && !atEOF:
				return 0, ErrNeedMore
			}
			return 0, fmt.Errorf("unexpected %q after the closing quote of field %d (a quote inside a quoted field is written twice)", data[i], len(p.ends))
		}
		// An unquoted field: up to the delimiter or the end of the line.
		j := i
		for j < len(data) && data[j] != p.Delim && data[j] != '\n' {
			j++
		}
		if j == len(data) && !atEOF {
			return 0, ErrNeedMore
		}
		field := data[i:j]
		if j < len(data) && data[j] == '\n' && len(field) > 0 && field[len(field)-1] == '\r' {
			field = field[:len(field)-1]
		}
		p.buf = append(p.buf, field...)
		p.ends, p.quoted = append(p.ends, len(p.buf)), append(p.quoted, false)
		if j == len(data) {
			return j, nil
		}
		if data[j] == '\n' {
			return j + 1, nil
		}
		i = j + 1
	}
}

// Len is the number of fields of the last record.
func (p *Parser) Len() int { return len(p.ends) }

// Field returns field i of the last record (valid until the next Next) and
// whether it was quoted.
func (p *Parser) Field(i int) ([]byte, bool) {
	start := 0
	if i > 0 {
		start = p.ends[i-1]
	}
	return p.buf[start:p.ends[i]], p.quoted[i]
}

// Blank reports whether the last record was an empty line (one unquoted
// empty field): readers skip those, as a row of one empty column cannot
// be told from one.
func (p *Parser) Blank() bool { return len(p.ends) == 1 && p.ends[0] == 0 && !p.quoted[0] }

// AppendValue appends field v (quoted or not) as a JSON value: with infer,
// per the package's typing contract; without, always a string.
func AppendValue(dst, v []byte, quoted, infer bool) []byte {
	if infer && !quoted {
		switch {
		case len(v) == 0:
			return append(dst, "null"...)
		case isBool(v) || IsNumber(v):
			return append(dst, v...)
		}
	}
	return jsonstring.AppendBytes(dst, v)
}

func isBool(v []byte) bool { return string(v) == "true" || string(v) == "false" }

// IsNumber reports whether v is a JSON number (-?int frac? exp?).
func IsNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i == len(v):
		return false
	case v[i] == '0':
		i++
	case v[i] >= '1' && v[i] <= '9':
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if i == len(v) || v[i] < '0' || v[i] > '9' {
			return false
		}
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if i == len(v) || v[i] < '0' || v[i] > '9' {
			return false
		}
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
	}
	return i == len(v)
}

// AppendField appends v as one CSV field: quoted when it holds the
// delimiter, a quote, CR or LF, or when quote is set (a string that would
// read back as another type, see the package comment).
func AppendField(dst, v []byte, delim byte, quote bool) []byte {
	if !quote {
		for _, c := range v {
			if c == delim || c == '"' || c == '\n' || c == '\r' {
				quote = true
				break
			}
		}
	}
	if !quote {
		return append(dst, v...)
	}
	dst = append(dst, '"')
	for {
		k := bytes.IndexByte(v, '"')
		if k < 0 {
			break
		}
		dst = append(dst, v[:k+1]...)
		dst = append(dst, '"')
		v = v[k+1:]
	}
	dst = append(dst, v...)
	return append(dst, '"')
}

// Header appends the header row of columns and its newline.
func Header(dst []byte, columns []string, delim byte) []byte {
	for i, c := range columns {
		if i > 0 {
			dst = append(dst, delim)
		}
		dst = AppendField(dst, []byte(c), delim, false)
	}
	return append(dst, '\n')
}

// Row writes JSON objects as CSV rows of fixed columns.
type Row struct {
	Columns []string
	Delim   byte
	index   map[string]int
	vals    [][]byte // raw JSON value of each column in the current record
	str     []byte
}

// NewRow returns a writer of columns.
func NewRow(columns []string, delim byte) *Row {
	r := &Row{Columns: columns, Delim: delim, index: make(map[string]int, len(columns)), vals: make([][]byte, len(columns))}
	for i, c := range columns {
		r.index[c] = i
	}
	return r
}

// ErrNotObject is Append's error for a record that is not a JSON object.
var ErrNotObject = errors.New("the record is not a JSON object: a csv row needs one member per column")

// Append appends the row of the JSON object obj and its newline: each
// column's member (missing or null: an empty field), strings unescaped
// and quoted as the typing contract needs, numbers and booleans as they
// are, objects and arrays as their JSON text.
func (r *Row) Append(dst, obj []byte) ([]byte, error) {
	clear(r.vals)
	if err := r.members(obj); err != nil {
		return dst, err
	}
	for i, v := range r.vals {
		if i > 0 {
			dst = append(dst, r.Delim)
		}
		switch {
		case len(v) == 0 || string(v) == "null":
		case v[0] == '"':
			s, err := r.unquote(v)
			if err != nil {
				return dst, err
			}
			dst = AppendField(dst, s, r.Delim, len(s) == 0 || isBool(s) || IsNumber(s))
		default:
			dst = AppendField(dst, v, r.Delim, false)
		}
	}
	return append(dst, '\n'), nil
}

// unquote decodes the JSON string v.
func (r *Row) unquote(v []byte) ([]byte, error) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, err
	}
	r.str = append(r.str[:0], s...)
	return r.str, nil
}

// members records the raw value of each column's member of obj (the last
// one wins when a name repeats, as encoding/json decides).
func (r *Row) members(obj []byte) error {
	if !json.Valid(obj) {
		return ErrNotObject
	}
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	var name []byte
	for i < len(obj) {
		end := skipString(obj, i)
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			_ = json.Unmarshal(obj[i:end], &s) // valid: checked above
			name = append(name[:0], s...)
			key = name
		}
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		vend := skipValue(obj, i)
		if c, ok := r.index[string(key)]; ok {
			r.vals[c] = obj[i:vend]
		}
		i = skipSpace(obj, vend)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		i = skipSpace(obj, i+1) // the comma
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the end of the (valid) JSON value at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}
