package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

var (
	errNoField   = errors.New("field missing")
	errNotInt    = errors.New("not an integer")
	errNotObject = errors.New("not a JSON object")
)

// parser extracts the sequence number from one line.
type parser struct {
	field  string
	prefix []byte // `"field"`, for the fast path
}

func newParser(field string) *parser {
	p := &parser{field: field}
	if field != "" {
		p.prefix, _ = json.Marshal(field)
	}
	return p
}

// parse returns the integer of line (without its newline): the whole line
// when no field is set, else the field of a JSON object.
func (p *parser) parse(line []byte) (int64, error) {
	line = bytes.TrimSpace(line)
	if p.field == "" {
		return parseInt(line)
	}
	if v, ok := p.fast(line); ok {
		return v, nil
	}
	return p.slow(line)
}

// fast parses exactly {"field": N} (any whitespace), the demo's shape, without
// a JSON decoder. Anything else is left to slow.
func (p *parser) fast(line []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("{"))
	if !ok {
		return 0, false
	}
	if rest, ok = bytes.CutPrefix(trimLeft(rest), p.prefix); !ok {
		return 0, false
	}
	if rest, ok = bytes.CutPrefix(trimLeft(rest), []byte(":")); !ok {
		return 0, false
	}
	rest = trimLeft(rest)
	end := 0
	for end < len(rest) && (rest[end] == '-' || isDigit(rest[end])) {
		end++
	}
	if tail := trimLeft(rest[end:]); len(tail) != 1 || tail[0] != '}' {
		return 0, false
	}
	v, err := parseInt(rest[:end])
	return v, err == nil
}

// slow decodes line as a JSON object and reads the field as an integer.
func (p *parser) slow(line []byte) (int64, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return 0, errNotObject
	}
	raw, ok := obj[p.field]
	if !ok {
		return 0, errNoField
	}
	return parseInt(raw)
}

// parseInt parses a decimal int64 without allocating.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return strconv.ParseInt(string(b), 10, 64) // error, or overflow check
	}
	var v int64
	for _, c := range digits {
		if !isDigit(c) {
			return 0, errNotInt
		}
		v = v*10 + int64(c-'0')
		if v < 0 { // 19 digits can overflow
			return strconv.ParseInt(string(b), 10, 64)
		}
	}
	if neg {
		v = -v
	}
	return v, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func trimLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}
