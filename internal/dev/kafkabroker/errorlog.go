package kafkabroker

import (
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
)

// maxLoggedErrors caps how many broker errors Close reports.
const maxLoggedErrors = 10

// errorLog is the kfake logger: it keeps the first error-level messages
// (failed persistence writes, mostly) so that Close can return them, and
// drops everything else.
type errorLog struct {
	mu      sync.Mutex
	errs    []error
	dropped int
}

func (l *errorLog) Logf(level kfake.LogLevel, format string, args ...any) {
	if level != kfake.LogLevelError {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) == maxLoggedErrors {
		l.dropped++
		return
	}
	l.errs = append(l.errs, fmt.Errorf(format, args...))
}

// err returns the logged errors joined, or nil.
func (l *errorLog) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	errs := l.errs
	if l.dropped > 0 {
		errs = append(errs[:len(errs):len(errs)], fmt.Errorf("and %d more errors", l.dropped))
	}
	return errors.Join(errs...)
}
