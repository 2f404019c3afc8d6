package runtime

import (
	"errors"
	"io/fs"
	"syscall"
)

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

// PathRefused reports whether err is a filesystem refusal that stays
// until someone changes the machine: permission denied, a regular file
// where a directory must be, a read-only filesystem. Found when an
// operator opens (an unreachable output path), it is a configuration
// error: mark it with SuppressRestarts. A full disk or an I/O error may
// pass and is not one.
func PathRefused(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EROFS)
}
