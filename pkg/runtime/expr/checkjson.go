package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalidJSON is CheckJSON's error for bytes that are not JSON.
var ErrInvalidJSON = errors.New("value is not valid JSON")

// CheckJSON reports why a record's value cannot be read as JSON by the
// evaluation (fields, decodeValue): it is not valid JSON (ErrInvalidJSON),
// or it holds a number beyond the range of a 64-bit float (1e400), which
// is valid JSON syntax that no evaluation can read. Sources of format json
// call it, so their onDecodeError sees both instead of an operator failing
// downstream. Values shorter than 309 bytes without an 'e' or 'E' right
// after a digit (an exponent; member names such as "user" do not count)
// hold no such number: only json.Valid's scan is paid for them.
func CheckJSON(data []byte) error {
	if !json.Valid(data) {
		return ErrInvalidJSON
	}
	if len(data) < 309 && !mayHoldExponent(data) {
		return nil
	}
	if err := checkNumbers(data); err != nil {
		return fmt.Errorf("value cannot be read as JSON: %w", err)
	}
	return nil
}

// mayHoldExponent reports whether data has an 'e' or 'E' after a digit:
// every exponent of a JSON number is one (a string holding "1e5" is a
// false alarm, which only costs checkNumbers' scan).
func mayHoldExponent(data []byte) bool {
	for _, e := range []byte{'e', 'E'} {
		for i := 0; ; {
			k := bytes.IndexByte(data[i:], e)
			if k < 0 {
				break
			}
			i += k + 1
			if i > 1 && data[i-2]-'0' <= 9 {
				return true
			}
		}
	}
	return false
}

// checkNumbers finds the first number of valid JSON data that a float64
// cannot hold.
func checkNumbers(data []byte) error {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			end, _, err := scanString(data, i)
			if err != nil {
				return err
			}
			i = end - 1
		case c == '-' || (c >= '0' && c <= '9'):
			j, exp := i, false
			for j < len(data) && !scalarEnd[data[j]] {
				exp = exp || data[j] == 'e' || data[j] == 'E'
				j++
			}
			// Without an exponent only 309 digits or more overflow.
			if exp || j-i > 308 {
				if err := numberRange(data[i:j]); err != nil {
					return err
				}
			}
			i = j - 1
		}
	}
	return nil
}

// numberRange is the error for a JSON number a float64 cannot hold.
func numberRange(num []byte) error {
	if _, err := strconv.ParseFloat(string(num), 64); errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("number %s is out of the range of a 64-bit float (±1.8e308)", excerptNumber(num))
	}
	return nil
}

func excerptNumber(num []byte) string {
	if len(num) > 40 {
		return string(num[:40]) + "…"
	}
	return string(num)
}
