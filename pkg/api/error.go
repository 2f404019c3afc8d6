package api

import (
	"errors"
	"fmt"
)

// Code classifies an error for the client; each maps to an HTTP status and
// a CLI exit code.
type Code string

const (
	CodeFailed       Code = "failed"       // operation failed (exit 1)
	CodeUsage        Code = "usage"        // bad request shape (exit 2)
	CodeInvalid      Code = "invalid"      // invalid spec or config (exit 3)
	CodeNotFound     Code = "not_found"    // no such job or path (exit 4)
	CodeUnavailable  Code = "unavailable"  // daemon unreachable (exit 5)
	CodeUnauthorized Code = "unauthorized" // missing or wrong token
	CodeConflict     Code = "conflict"     // wrong job state (exit 7)
	CodeTooLarge     Code = "too_large"    // request body over the limit
	CodeTimeout      Code = "timeout"      // operation timed out (exit 1)
	// CodeTooManyRequests: the client sent more than the daemon takes
	// (rest.submit-rate-limit); retry later (exit 1).
	CodeTooManyRequests Code = "too_many_requests"
)

// ExitCode is the CLI exit code for the code.
func (c Code) ExitCode() int {
	switch c {
	case CodeUsage:
		return 2
	case CodeInvalid:
		return 3
	case CodeNotFound:
		return 4
	case CodeUnavailable:
		return 5
	case CodeConflict:
		return 7
	}
	return 1
}

// Error is an error with a code; it is what the control API sends on the
// wire ({"error": {...}}).
type Error struct {
	Code    Code         `json:"code"`
	Message string       `json:"message"`
	Details []FieldError `json:"details,omitempty"`
	cause   error
}

func (e *Error) Error() string {
	if len(e.Details) > 0 {
		return (&SpecError{Errors: e.Details}).Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.cause }

// Errorf makes an *Error with a code.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), cause: errors.Unwrap(err)}
}

// Invalid wraps a spec error so its details travel to the client.
func Invalid(err error) *Error {
	var se *SpecError
	if errors.As(err, &se) {
		return &Error{Code: CodeInvalid, Message: se.Error(), Details: se.Errors, cause: err}
	}
	return &Error{Code: CodeInvalid, Message: err.Error(), cause: err}
}

// CodeOf returns the code of err (CodeFailed for plain errors).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var se *SpecError
	if errors.As(err, &se) {
		return CodeInvalid
	}
	return CodeFailed
}
