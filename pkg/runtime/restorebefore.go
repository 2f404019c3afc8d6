package runtime

import (
	"fmt"
)

// RestoreBeforeError is returned by an operator (from Open or
// NotifyCheckpointComplete) whose side effects of checkpoint Checkpoint
// are lost for good: a Kafka transaction the broker aborted before the
// sink could commit it. Restoring that checkpoint again would skip those
// records (its source positions are past them), so the job fails over to
// the latest completed snapshot before it and replays; the records were
// never visible, so nothing is duplicated by the replay in that sink.
type RestoreBeforeError struct {
	Checkpoint int64
	Err        error
}

func (e *RestoreBeforeError) Error() string {
	return fmt.Sprintf("output of checkpoint %d lost (%v): restore from a snapshot before it", e.Checkpoint, e.Err)
}

func (e *RestoreBeforeError) Unwrap() error { return e.Err }
