package engine

import (
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Recovery is what resuming a job needs, as a registry records it. The job
// hands a new one to JobOptions.OnRecord before anything a snapshot commits
// is committed, so a durable Recovery never falls behind committed output.
type Recovery struct {
	// RestorePoint is the newest snapshot whose completion may have
	// committed output (nil: none yet).
	RestorePoint *checkpoint.Point
	// Initial is the savepoint the job was submitted with (nil: none).
	Initial *checkpoint.Point
	// Retained are the completed checkpoints retention keeps, oldest first.
	Retained []int64
	// NextID is the id of the job's next checkpoint.
	NextID   int64
	Restarts int
	// Legacy: RestorePoint comes from a record that could lag behind
	// committed output (see checkpoint.RestoreFacts.Legacy); cleared by the
	// first restore point the job records.
	Legacy bool
}

// Recovery returns the job's current recovery facts.
func (j *Job) Recovery() Recovery {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := &j.status
	return Recovery{RestorePoint: s.restorePoint, Initial: s.initial, Retained: append([]int64(nil), s.retained...),
		NextID: s.nextID, Restarts: s.restarts, Legacy: s.legacy}
}

// record makes p the job's restore point (nil: none, the job starts
// over), durably first (OnRecord), then in memory, with the checkpoints
// retention manages and the next checkpoint id; an error leaves both as
// they were and fails the snapshot.
func (j *Job) record(p *checkpoint.Point, retained []int64, nextID int64) error {
	rec := j.Recovery()
	rec.RestorePoint, rec.Retained, rec.NextID, rec.Legacy = p, retained, nextID, false
	id := int64(0)
	if p != nil {
		id = p.ID
	}
	if err := j.env.Fire("checkpoint.record", id); err != nil {
		return err
	}
	if j.opts.OnRecord != nil {
		if err := j.opts.OnRecord(j, rec); err != nil {
			return err
		}
	}
	j.mu.Lock()
	j.status.restorePoint, j.status.legacy = p, false
	j.status.retained, j.status.nextID = append([]int64(nil), retained...), max(j.status.nextID, nextID)
	j.status.uncertain = nil
	j.mu.Unlock()
	return nil
}

// recordUncertain notes checkpoint id as one whose record write failed but
// may have been applied (see jobStatus.uncertain).
func (j *Job) recordUncertain(id int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status.uncertain = append(j.status.uncertain, id)
}

// uncertainIDs are the checkpoints recordUncertain noted since the last
// successful record.
func (j *Job) uncertainIDs() []int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]int64(nil), j.status.uncertain...)
}

// SparingUncertain is d without the discards of the checkpoints in
// uncertain: the in-memory record a restart decides from may be older than
// the durable one, which may name them.
func SparingUncertain(d checkpoint.RestoreDecision, uncertain []int64) checkpoint.RestoreDecision {
	if len(uncertain) == 0 {
		return d
	}
	var keep []checkpoint.Point
	for _, p := range d.Discard {
		if !slices.Contains(uncertain, p.ID) {
			keep = append(keep, p)
		}
	}
	d.Discard = keep
	return d
}

// PointOf is the restore point a loaded snapshot stands for.
func PointOf(r *Restore) checkpoint.Point {
	kind, _ := checkpoint.ParseKind(r.Meta.Kind) // a decoded _metadata has a known kind
	return checkpoint.Point{ID: r.Meta.CheckpointID, Kind: kind, Dir: r.Dir}
}

// ChooseRestore carries out the restore decision (checkpoint.DecideRestore)
// on fsys: it loads the snapshots the decision asks for until it decides,
// and warns about each one passed over. It deletes nothing: before a job
// starts from a Load or Fresh decision, its caller deletes d.Discard with
// DiscardAbandoned. The job loop (restart after a failure) and the daemon
// (resume after a restart) both call it.
func ChooseRestore(fsys vfs.FS, f checkpoint.RestoreFacts, log zerolog.Logger) (*Restore, checkpoint.RestoreDecision) {
	if f.Tried == nil {
		f.Tried = map[string]error{}
	}
	loaded := map[string]*Restore{}
	for {
		d := checkpoint.DecideRestore(f)
		if d.Action != checkpoint.RestoreTry {
			for _, u := range d.Passed {
				log.Warn().Err(u.Err).Str("snapshot", u.Dir).Int64("checkpoint_id", u.ID).Msg("snapshot unusable for restore; trying an older one")
			}
			return loaded[d.Point.Dir], d
		}
		r, err := LoadRestore(fsys, d.Point.Dir)
		f.Tried[d.Point.Dir] = err
		loaded[d.Point.Dir] = r
	}
}

// DiscardAbandoned deletes the checkpoints a Load or Fresh decision found
// abandoned (never recorded, so never committed): a sink restored from the
// decision removes what they refer to, and left on disk one could look
// complete to a later restore.
func DiscardAbandoned(fsys vfs.FS, d checkpoint.RestoreDecision, log zerolog.Logger) {
	if d.Action != checkpoint.RestoreLoad && d.Action != checkpoint.RestoreFresh {
		return
	}
	for _, p := range d.Discard {
		if err := checkpoint.Dispose(fsys, p.Dir); err != nil {
			log.Warn().Err(err).Str("dir", p.Dir).Msg("could not delete an abandoned checkpoint")
			continue
		}
		log.Info().Int64("checkpoint_id", p.ID).Str("dir", p.Dir).Msg("deleted a checkpoint the registry does not know (aborted, or completed but never recorded, so never committed)")
	}
}

// RestoreFactsOf are the facts of the restore decision for job jobID with
// the recorded rec, its checkpoints under base (state.checkpoints.dir; ""
// when the job has none) on fsys.
func RestoreFactsOf(fsys vfs.FS, base, jobID string, rec Recovery) (checkpoint.RestoreFacts, error) {
	f := checkpoint.RestoreFacts{Recorded: rec.RestorePoint, Initial: rec.Initial, NextID: rec.NextID, Legacy: rec.Legacy}
	if base == "" {
		return f, nil
	}
	for _, id := range rec.Retained {
		f.Retained = append(f.Retained, checkpoint.Point{ID: id, Kind: checkpoint.Periodic, Dir: checkpoint.CheckpointDir(base, jobID, id)})
	}
	list, err := checkpoint.List(fsys, base, jobID)
	for _, l := range list {
		f.OnDisk = append(f.OnDisk, checkpoint.Point{ID: l.ID, Kind: checkpoint.Periodic, Dir: l.Dir})
	}
	if err != nil {
		return f, fmt.Errorf("list the checkpoints of job %s: %w", jobID, err)
	}
	return f, nil
}
