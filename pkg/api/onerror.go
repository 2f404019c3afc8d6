package api

import "strings"

// What an operator does with a record it cannot process: its onError
// (docs/errors.md; runtime.Context.RecordError carries it out).
const (
	OnErrorFail       = "fail"       // the default: fail the job (a record failing twice ends it FAILED)
	OnErrorSkip       = "skip"       // count, log the first few, go on
	OnErrorSideOutput = "sideOutput" // send it with its error to the side output "errors"
)

// onErrorValue reads an onError value in any spelling (sideOutput,
// side-output, SIDE_OUTPUT) and returns ours; false when it is none.
func onErrorValue(v string) (string, bool) {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(v)) {
	case "fail":
		return OnErrorFail, true
	case "skip":
		return OnErrorSkip, true
	case "sideoutput":
		return OnErrorSideOutput, true
	}
	return "", false
}

// validateOnError checks and normalizes an operator's onError.
func (p *ParsedJob) validateOnError(path string, op *OperatorSpec) {
	if op.OnError == "" {
		return
	}
	v, ok := onErrorValue(op.OnError)
	if !ok {
		p.Dec.ErrorAt(path+".onError", "must be fail, skip or sideOutput, got %q", op.OnError)
		return
	}
	op.OnError = v
}
