package runtimetest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process used so far (user + system).
// Benchmarks compare CPU time, not wall time: on a shared, loaded machine
// the wall clock measures the neighbours too.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
