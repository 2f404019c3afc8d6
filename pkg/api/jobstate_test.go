package api

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

var allJobStates = []JobState{StateCreated, StateRunning, StateRestarting, StateFinished, StateCancelling,
	StateCanceled, StateFailing, StateFailed, StateSuspended}

// legalTransitions is written out here, not read from jobTransitions, so a
// change to the table is a visible change to this test.
var legalTransitions = map[[2]JobState]bool{
	{StateCreated, StateRunning}:       true,
	{StateCreated, StateCancelling}:    true,
	{StateCreated, StateFailing}:       true,
	{StateCreated, StateSuspended}:     true,
	{StateRunning, StateFinished}:      true,
	{StateRunning, StateCancelling}:    true,
	{StateRunning, StateFailing}:       true,
	{StateRunning, StateRestarting}:    true,
	{StateRunning, StateSuspended}:     true,
	{StateFailing, StateFailed}:        true,
	{StateFailing, StateRestarting}:    true,
	{StateFailing, StateCancelling}:    true,
	{StateRestarting, StateRunning}:    true,
	{StateRestarting, StateCancelling}: true,
	{StateRestarting, StateFailing}:    true,
	{StateRestarting, StateSuspended}:  true,
	{StateCancelling, StateCanceled}:   true,
	{StateSuspended, StateCreated}:     true,
}

// TestCanTransition checks every pair of states: the legal ones above are
// allowed, every other one (self-loops included) is refused.
func TestCanTransition(t *testing.T) {
	n := 0
	for from, tos := range jobTransitions {
		for _, to := range tos {
			assert.True(t, legalTransitions[[2]JobState{from, to}], "jobTransitions has %s -> %s, missing from this test", from, to)
			n++
		}
	}
	assert.Equal(t, len(legalTransitions), n)
	for _, from := range allJobStates {
		for _, to := range allJobStates {
			want := legalTransitions[[2]JobState{from, to}]
			assert.Equal(t, want, CanTransition(from, to), "%s -> %s", from, to)
		}
	}
}

func TestCanTransitionIllegalSample(t *testing.T) {
	for _, tr := range [][2]JobState{
		{StateCreated, StateFinished},    // never ran
		{StateCreated, StateFailed},      // fails through FAILING
		{StateRunning, StateCanceled},    // cancels through CANCELLING
		{StateRunning, StateFailed},      // fails through FAILING
		{StateRunning, StateCreated},     //
		{StateRunning, StateRunning},     // no self-loops
		{StateCancelling, StateRunning},  // a cancel is not undone
		{StateCancelling, StateFailed},   //
		{StateFailing, StateRunning},     // restarts through RESTARTING
		{StateRestarting, StateFinished}, //
		{StateSuspended, StateRunning},   // resumes through CREATED
		{StateFinished, StateRunning},    // terminal
		{StateCanceled, StateCreated},    // terminal
		{StateFailed, StateRestarting},   // terminal
		{"BOGUS", StateRunning},
		{StateRunning, "BOGUS"},
	} {
		assert.False(t, CanTransition(tr[0], tr[1]), "%s -> %s", tr[0], tr[1])
	}
}

func TestJobStateTerminalAndActive(t *testing.T) {
	for _, tc := range []struct {
		s                JobState
		terminal, active bool
	}{
		{StateCreated, false, true},
		{StateRunning, false, true},
		{StateRestarting, false, true},
		{StateFailing, false, true},
		{StateCancelling, false, true},
		{StateSuspended, false, false},
		{StateFinished, true, false},
		{StateCanceled, true, false},
		{StateFailed, true, false},
	} {
		t.Run(string(tc.s), func(t *testing.T) {
			assert.Equal(t, tc.terminal, tc.s.Terminal())
			assert.Equal(t, tc.active, tc.s.Active())
			if tc.terminal {
				for _, to := range allJobStates {
					assert.False(t, CanTransition(tc.s, to), "terminal %s has no way out (to %s)", tc.s, to)
				}
			} else {
				assert.NotEmpty(t, jobTransitions[tc.s], "a non-terminal state has a way out")
			}
		})
	}
}

// TestJobStatesReachable: every state is reachable from CREATED and every
// non-terminal state can reach a terminal one (no trap states).
func TestJobStatesReachable(t *testing.T) {
	reach := func(from JobState) map[JobState]bool {
		seen := map[JobState]bool{from: true}
		queue := []JobState{from}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			for _, to := range jobTransitions[s] {
				if !seen[to] {
					seen[to] = true
					queue = append(queue, to)
				}
			}
		}
		return seen
	}
	fromCreated := reach(StateCreated)
	for _, s := range allJobStates {
		assert.True(t, fromCreated[s], "%s is unreachable from CREATED", s)
		if s.Terminal() {
			continue
		}
		terminal := 0
		for r := range reach(s) {
			if r.Terminal() {
				terminal++
			}
		}
		assert.Positive(t, terminal, fmt.Sprintf("%s cannot reach a terminal state", s))
	}
}

func TestCodeExitCodes(t *testing.T) {
	for code, exit := range map[Code]int{CodeFailed: 1, CodeUsage: 2, CodeInvalid: 3, CodeNotFound: 4,
		CodeUnavailable: 5, CodeConflict: 7, CodeTimeout: 1, CodeUnauthorized: 1, CodeTooLarge: 1} {
		assert.Equal(t, exit, code.ExitCode(), code)
	}
	assert.Equal(t, CodeFailed, CodeOf(fmt.Errorf("plain")))
	e := Errorf(CodeNotFound, "job %s: %w", "abc", fmt.Errorf("inner"))
	assert.Equal(t, "job abc: inner", e.Error())
	assert.Equal(t, CodeNotFound, CodeOf(fmt.Errorf("wrapped: %w", e)))
	assert.EqualError(t, e.Unwrap(), "inner")
}
