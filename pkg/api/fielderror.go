package api

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a place in a spec or config file.
type Pos struct {
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

// FieldError is one problem with a spec or config file: where it is, which
// field, what is wrong and, where we can tell, what to do.
type FieldError struct {
	File  string `json:"file,omitempty"`
	Pos   Pos    `json:"pos"`
	Field string `json:"field,omitempty"`
	Msg   string `json:"message"`
}

func (e FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Pos.Line, e.Pos.Column)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// SpecError collects every problem found in one file, so a user fixes them
// in one pass instead of one per run.
type SpecError struct {
	Errors []FieldError `json:"errors"`
}

func (e *SpecError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fe.Error()
	}
	return strings.Join(lines, "\n")
}

// Sort orders the errors by position so output reads top to bottom.
func (e *SpecError) Sort() {
	sort.SliceStable(e.Errors, func(i, j int) bool {
		a, b := e.Errors[i].Pos, e.Errors[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// maxReportedErrors bounds the problems an error reports: a document of
// thousands of broken aliases must not answer with megabytes of them.
const maxReportedErrors = 100

// Err returns nil when no problem was collected. Past maxReportedErrors
// problems it reports the first ones (by position) and how many more
// there are.
func (e *SpecError) Err() error {
	if e == nil || len(e.Errors) == 0 {
		return nil
	}
	e.Sort()
	if n := len(e.Errors); n > maxReportedErrors {
		first := append([]FieldError(nil), e.Errors[:maxReportedErrors]...)
		more := FieldError{File: first[0].File, Msg: fmt.Sprintf("and %d more problems; fix the ones above first", n-maxReportedErrors)}
		return &SpecError{Errors: append(first, more)}
	}
	return e
}
