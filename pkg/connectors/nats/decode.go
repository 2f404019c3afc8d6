package nats

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
)

// decoder checks payloads against the source's format.
type decoder struct {
	json    bool
	skip    bool // onDecodeError: skip
	skipped *atomic.Int64
}

// check reports whether data may be emitted and, when not, whether that
// is an error (onDecodeError: fail) rather than a skip.
func (d decoder) check(data []byte) (emit, fail bool) {
	if !d.json || json.Valid(data) {
		return true, false
	}
	if d.skip {
		d.skipped.Add(1)
		return false, false
	}
	return false, true
}

// invalid is the error for a payload check refused, at a place (stream and
// sequence).
func invalid(where string, data []byte) error {
	return fmt.Errorf("%s: payload is not valid JSON (format json; set onDecodeError: skip to skip such messages): %s", where, excerpt(data))
}

func excerpt(b []byte) string {
	const max = 64
	if len(b) > max {
		return fmt.Sprintf("%q…", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
