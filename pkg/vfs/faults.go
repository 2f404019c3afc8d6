package vfs

import (
	"errors"
	"sync"
	"syscall"
)

// ErrInjected is the error an Injector returns for a generic failure.
var ErrInjected = errors.New("vfs: injected error")

// ErrNoSpace is an injected "disk full": errors.Is(err, syscall.ENOSPC) and
// errors.Is(err, ErrInjected) both hold.
var ErrNoSpace error = injectedErrno{syscall.ENOSPC}

type injectedErrno struct{ errno syscall.Errno }

func (e injectedErrno) Error() string   { return e.errno.Error() + " (injected)" }
func (e injectedErrno) Unwrap() []error { return []error{e.errno, ErrInjected} }

// Injector decides whether an operation fails. A wrapper from WithFaults
// calls MaybeError before running each operation, on the caller's
// goroutine, and if it returns an error the operation does not run and
// fails with that error (wrapped in *os.PathError or *os.LinkError).
// Implementations must be safe for concurrent use if the FS is.
type Injector interface {
	MaybeError(op Op) error
}

// InjectorFunc adapts a function to an Injector.
type InjectorFunc func(Op) error

// MaybeError calls f.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// WithFaults returns an FS that consults inj before every operation of
// fsys, including Read, Write, Sync, Truncate, Stat and Close on the files
// it opens.
func WithFaults(fsys FS, inj Injector) FS {
	return &hookFS{fs: fsys, before: inj.MaybeError}
}

// NthInjector fails the n-th operation that matches its predicate, once.
// It is safe for concurrent use.
type NthInjector struct {
	n    int
	pred func(Op) bool
	err  error

	mu    sync.Mutex
	seen  int
	fired bool
	op    Op
}

// OnNth returns an injector that fails the n-th (1-based) operation
// matching pred (nil matches every operation) with err, exactly once.
func OnNth(n int, pred func(Op) bool, err error) *NthInjector {
	return &NthInjector{n: n, pred: pred, err: err}
}

// MaybeError implements Injector.
func (i *NthInjector) MaybeError(op Op) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.fired || (i.pred != nil && !i.pred(op)) {
		return nil
	}
	i.seen++
	if i.seen != i.n {
		return nil
	}
	i.fired, i.op = true, op
	return i.err
}

// Fired reports whether the injector has failed an operation.
func (i *NthInjector) Fired() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.fired
}

// Op returns the operation that was failed; it is valid once Fired.
func (i *NthInjector) Op() Op {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.op
}
