package vfs

import (
	"slices"
	"sync"
)

// Counter wraps an FS and records its mutating operations (IsMutating),
// in order, so a crash sweep knows how many crash points a workload has.
// It is safe for concurrent use.
type Counter struct {
	fs FS

	mu  sync.Mutex
	ops []Op
}

// Count returns a Counter over fsys; run the workload on its FS().
func Count(fsys FS) *Counter {
	c := &Counter{}
	c.fs = &hookFS{fs: fsys, before: c.record}
	return c
}

func (c *Counter) record(op Op) error {
	if IsMutating(op) {
		c.mu.Lock()
		c.ops = append(c.ops, op)
		c.mu.Unlock()
	}
	return nil
}

// FS returns the counting FS.
func (c *Counter) FS() FS { return c.fs }

// N returns the number of mutating operations so far.
func (c *Counter) N() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ops)
}

// Ops returns a copy of the mutating operations so far, in order.
func (c *Counter) Ops() []Op {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ops)
}
