package nats

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
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
	if !d.json || expr.CheckJSON(data) == nil {
		return true, false
	}
	if d.skip {
		d.skipped.Add(1)
		return false, false
	}
	return false, true
}

// invalid is the error for a payload check refused, at a place (stream and
// sequence): why expr.CheckJSON refused it (not JSON, a number out of
// range).
func invalid(where string, data []byte) error {
	why := "payload is not valid JSON"
	if err := expr.CheckJSON(data); err != nil && !errors.Is(err, expr.ErrInvalidJSON) {
		why = "payload cannot be read as JSON: " + errors.Unwrap(err).Error()
	}
	return fmt.Errorf("%s: %s (format json; set onDecodeError: skip to skip such messages): %s", where, why, excerpt(data))
}

func excerpt(b []byte) string {
	const max = 64
	if len(b) > max {
		return fmt.Sprintf("%q…", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
