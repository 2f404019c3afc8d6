package engine

import (
	"github.com/flinkgo/flinkgo/internal/checkpoint"
)

// markPendingStop records where stop savepoint id is being written, before
// its _metadata is published (checkpoint.MarkPendingStop). Without
// checkpoint storage there is nothing to resume from but the savepoint.
func (j *Job) markPendingStop(id int64, dir string) error {
	if j.opts.CheckpointsDir == "" {
		return nil
	}
	return checkpoint.MarkPendingStop(j.env.FS, j.opts.CheckpointsDir, j.id, id, dir)
}

// resolvePendingStops settles the stop savepoints an earlier attempt was
// publishing, now that this attempt restores from restore: one it restores
// from (or an older one) is kept, a newer one belongs to a branch of the
// job that was abandoned (it never committed; the job resumed from an
// older snapshot) and is abandoned so it no longer looks complete.
func (j *Job) resolvePendingStops(restore *Restore) {
	stops, err := checkpoint.PendingStops(j.env.FS, j.opts.CheckpointsDir, j.id)
	if err != nil {
		j.log.Warn().Err(err).Msg("could not list pending stop savepoints")
		return
	}
	var from int64
	if restore != nil {
		from = restore.Meta.CheckpointID
	}
	for _, s := range stops {
		if s.ID > from {
			if err := checkpoint.Abandon(j.env.FS, s.Dir); err != nil {
				j.log.Warn().Err(err).Str("savepoint", s.Dir).Msg("could not mark a stop savepoint abandoned")
				continue // try again at the next attempt
			}
			j.log.Warn().Int64("checkpoint_id", s.ID).Str("savepoint", s.Dir).Int64("restored_checkpoint_id", from).
				Msg("stop savepoint abandoned: its stop did not commit and the job resumed from an older snapshot (`flinkgo savepoint dispose --force` removes it)")
		}
		if err := j.env.FS.Remove(s.Marker); err != nil {
			j.log.Warn().Err(err).Str("marker", s.Marker).Msg("could not remove a pending stop marker")
		}
	}
}
