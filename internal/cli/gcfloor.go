package cli

import "runtime"

// gcFloor holds the daemon's heap floor (see holdGCFloor) until it exits.
var gcFloor []byte

// holdGCFloor makes the Go garbage collector treat n more bytes as live:
// the next collection is due when the heap reaches GOGC% beyond live + n,
// not beyond live alone. A streaming job allocates its records fast and
// keeps little of them, so with a few MiB live the collector would run
// hundreds of times a second; with the floor it runs about every n bytes
// allocated. The slice is never written: its pages are fresh from the
// kernel (already zero, which Go knows), so they take address space, not
// memory; what the floor costs in memory is the garbage it lets build up
// between collections, up to about n. Flink's task managers get the same
// trade from a fixed-size JVM heap. (GOMEMLIMIT sets a ceiling, not a
// floor; runtime/debug has no floor.)
func holdGCFloor(n int64) {
	if n <= 0 {
		return
	}
	gcFloor = make([]byte, n)
}

// releaseGCFloor lets the floor go (the daemon has shut down).
func releaseGCFloor() {
	runtime.KeepAlive(gcFloor)
	gcFloor = nil
}
