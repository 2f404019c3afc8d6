package api

// JobState is a job's lifecycle state, named as Flink's JobStatus.
type JobState string

const (
	StateCreated    JobState = "CREATED"
	StateRunning    JobState = "RUNNING"
	StateRestarting JobState = "RESTARTING"
	StateFinished   JobState = "FINISHED"
	StateCancelling JobState = "CANCELLING"
	StateCanceled   JobState = "CANCELED"
	StateFailing    JobState = "FAILING"
	StateFailed     JobState = "FAILED"
	// StateSuspended: the daemon shut down under the job; it resumes from its
	// latest checkpoint when the daemon starts again (Flink's SUSPENDED).
	StateSuspended JobState = "SUSPENDED"
)

// jobTransitions is the table of legal state changes; anything else is a bug.
var jobTransitions = map[JobState][]JobState{
	StateCreated:    {StateRunning, StateCancelling, StateFailing, StateSuspended},
	StateRunning:    {StateFinished, StateCancelling, StateFailing, StateRestarting, StateSuspended},
	StateFailing:    {StateFailed, StateRestarting, StateCancelling},
	StateRestarting: {StateRunning, StateCancelling, StateFailing, StateSuspended},
	StateCancelling: {StateCanceled},
	StateSuspended:  {StateCreated},
}

// CanTransition reports whether from → to is legal.
func CanTransition(from, to JobState) bool {
	for _, s := range jobTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Terminal reports whether a job in s will never run again.
func (s JobState) Terminal() bool {
	return s == StateFinished || s == StateCanceled || s == StateFailed
}

// Active reports whether the job holds running tasks or will (restart).
func (s JobState) Active() bool {
	return s == StateCreated || s == StateRunning || s == StateRestarting || s == StateFailing || s == StateCancelling
}
