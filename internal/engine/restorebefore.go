package engine

import (
	"errors"
	"fmt"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// restoreBefore returns the checkpoint id an attempt's failure says not
// to restore (0 when the failure is an ordinary one).
func restoreBefore(err error) int64 {
	var rb *runtime.RestoreBeforeError
	if errors.As(err, &rb) {
		return rb.Checkpoint
	}
	return 0
}

// idsBelow keeps the checkpoint ids below id.
func idsBelow(ids []int64, id int64) []int64 {
	var out []int64
	for _, x := range ids {
		if x < id {
			out = append(out, x)
		}
	}
	return out
}

// noteRestoreBefore says in the log and in the checkpoint history that a
// checkpoint's output was lost and where the job resumes instead.
func (j *Job) noteRestoreBefore(failure error, chosen *Restore) {
	before := restoreBefore(failure)
	if before == 0 {
		return
	}
	from := "the beginning (no earlier checkpoint)"
	if chosen != nil {
		from = fmt.Sprintf("%s %d (%s)", chosen.Meta.Kind, chosen.Meta.CheckpointID, chosen.Dir)
	}
	j.log.Error().Err(failure).Int64("checkpoint_id", before).Str("restore_from", from).
		Msg("output of a completed checkpoint lost before its commit; restoring from the snapshot before it and replaying")
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.status.history {
		if h := &j.status.history[i]; h.ID == before {
			h.FailureReason = fmt.Sprintf("output lost before its commit (%v); the job restored from %s and replayed", failure, from)
			h.Discarded = true
		}
	}
}
