package vfs

import (
	"errors"
	"sync"
)

// ErrCrashed is returned by every operation of a CrashPoint's FS once it
// has crashed: the simulated process is dead and the workload should stop.
var ErrCrashed = errors.New("vfs: crashed (simulated)")

// CrashPoint simulates a crash at the k-th mutating operation on a MemFS.
// Just before that operation would run, it takes mem.CrashClone(model),
// keeps the clone for the test's recovery and fails that operation and
// every later one (of any kind) with ErrCrashed. It is safe for concurrent
// use.
//
// A crash sweep first runs the workload under Count to learn N, then for
// each k in 1..N runs it again on a fresh MemFS under CrashAt(mem, k,
// model) and runs recovery on Clone().
type CrashPoint struct {
	mem   *MemFS
	k     int
	model CrashModel
	fs    FS

	mu      sync.Mutex
	seen    int
	crashed bool
	clone   *MemFS
	last    Op
}

// CrashAt returns a CrashPoint that crashes mem at the k-th (1-based)
// mutating operation (see IsMutating) done through its FS().
func CrashAt(mem *MemFS, k int, model CrashModel) *CrashPoint {
	c := &CrashPoint{mem: mem, k: k, model: model}
	c.fs = &hookFS{fs: mem, before: c.before}
	return c
}

func (c *CrashPoint) before(op Op) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return ErrCrashed
	}
	if !IsMutating(op) {
		return nil
	}
	c.seen++
	if c.seen < c.k {
		return nil
	}
	c.clone = c.mem.CrashClone(c.model)
	c.crashed, c.last = true, op
	return ErrCrashed
}

// FS returns the FS the workload runs on.
func (c *CrashPoint) FS() FS { return c.fs }

// Crashed reports whether the crash has happened.
func (c *CrashPoint) Crashed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashed
}

// Clone returns what survived the crash, or nil before it.
func (c *CrashPoint) Clone() *MemFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clone
}

// LastOp returns the operation at which the crash happened (which did not
// run); it is the zero Op before the crash.
func (c *CrashPoint) LastOp() Op {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
