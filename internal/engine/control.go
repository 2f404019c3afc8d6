package engine

import "fmt"

// ControlKind says what the job asks of a subtask.
type ControlKind uint8

const (
	// CtrlTrigger asks a source subtask to inject Barrier (sources only).
	CtrlTrigger ControlKind = iota + 1
	// CtrlComplete notifies that checkpoint ID completed.
	CtrlComplete
	// CtrlAbort notifies that checkpoint ID was aborted.
	CtrlAbort
)

func (k ControlKind) String() string {
	switch k {
	case CtrlTrigger:
		return "trigger"
	case CtrlComplete:
		return "complete"
	case CtrlAbort:
		return "abort"
	}
	return fmt.Sprintf("ControlKind(%d)", k)
}

// Control is a message from the job to one subtask, delivered through the
// subtask's gate ahead of its input events.
type Control struct {
	Kind    ControlKind
	Barrier Barrier // CtrlTrigger
	ID      int64   // CtrlComplete, CtrlAbort
	// Drain (with a terminal trigger) ends the input first: operators see
	// end of data and flush before the final barrier (stop --drain).
	Drain bool
}
