package e2e

import (
	"flag"
	"strconv"
	"sync"
	"testing"
)

// The package's parallel tests take turns of their own, not go test's:
// at most -parallel of them run at once, as before, but the chains
// (TestHA, TestKillLoops: a few minutes of the package's work, one test
// after another) take theirs before any other test does. go test hands its
// turns out in no set order once the sequential tests are done, and a
// chain that started among the last ran for its last 100 s beside nothing
// else. A test calls parallel(t) where it would call t.Parallel(); a
// chain calls parallelFirst(t).

// turns hands the turns out.
type turns struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int
	// chains is the number of chains that have started (in the sequential
	// phase, up to their t.Parallel) and have no turn yet.
	chains int
}

var testTurns *turns

// takeOverParallel makes the package's turns the -parallel that go test
// was given (its default: GOMAXPROCS) and lifts go test's own limit. It
// runs in TestMain, before m.Run.
func takeOverParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.parallel")
	n, err := strconv.Atoi(f.Value.String())
	if err != nil || n < 1 {
		n = 1
	}
	testTurns = &turns{free: n}
	testTurns.cond = sync.NewCond(&testTurns.mu)
	if err := f.Value.Set("1000"); err != nil {
		panic(err)
	}
}

// parallel is t.Parallel, then a turn: the test waits until fewer than
// -parallel tests run and no chain waits.
func parallel(t *testing.T) {
	t.Parallel()
	testTurns.take(t, false)
}

// parallelFirst is parallel for a chain: counted before the sequential
// phase ends (top-level tests run one by one up to their t.Parallel), it
// is served before every other test that waits.
func parallelFirst(t *testing.T) {
	testTurns.mu.Lock()
	testTurns.chains++
	testTurns.mu.Unlock()
	t.Parallel()
	testTurns.take(t, true)
}

// take waits for a turn and gives it back when t has ended (its cleanups
// run last-in first-out: this one after the test's own).
func (s *turns) take(t *testing.T, chain bool) {
	s.mu.Lock()
	for s.free == 0 || (!chain && s.chains > 0) {
		s.cond.Wait()
	}
	s.free--
	if chain {
		s.chains--
	}
	s.mu.Unlock()
	s.cond.Broadcast()
	t.Cleanup(func() {
		s.mu.Lock()
		s.free++
		s.mu.Unlock()
		s.cond.Broadcast()
	})
}
