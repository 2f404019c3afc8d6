package engine

import "strconv"

// Failure is an operator error with the operator and subtask it came from,
// for the job's error message.
type Failure struct {
	UID     string
	Subtask int
	Err     error
}

func (f *Failure) Error() string {
	return "operator " + f.UID + " subtask " + strconv.Itoa(f.Subtask) + ": " + f.Err.Error()
}

func (f *Failure) Unwrap() error { return f.Err }
