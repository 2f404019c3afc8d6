package runtime

import "errors"

// ErrRestartsSuppressed marks an error no restart can cure: errors.Is(err,
// ErrRestartsSuppressed) tells the engine to fail the job at once.
var ErrRestartsSuppressed = errors.New("restarting cannot help")

// SuppressRestarts marks err, returned by an operator, as one no restart
// can cure (Flink's SuppressRestartsException): the job is FAILED at once
// instead of restarting by its strategy. For refusals such as an output
// directory owned by another job, where retrying only repeats the error.
func SuppressRestarts(err error) error {
	if err == nil {
		return nil
	}
	return &suppressed{err}
}

type suppressed struct{ err error }

func (s *suppressed) Error() string   { return s.err.Error() }
func (s *suppressed) Unwrap() []error { return []error{s.err, ErrRestartsSuppressed} }
