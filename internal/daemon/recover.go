package daemon

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// recover loads the registry: finished jobs become history; jobs that were
// running when the previous daemon stopped (crash or shutdown) resume from
// their latest complete checkpoint.
func (d *Daemon) recover() {
	recs, errs := d.reg.load()
	for _, err := range errs {
		d.log.Error().Err(err).Msg("unreadable job registry entry skipped")
	}
	for _, rec := range recs {
		e := &entry{rec: *rec}
		if rec.State.Terminal() {
			d.jobs[rec.ID] = e
			continue
		}
		if rec.State == api.StateCancelling {
			d.finishCancel(e)
			continue
		}
		if rec.State == api.StateSuspended && !d.restoreOnStart {
			d.log.Info().Str("job", rec.ID).Str("restore_point", rec.Info.RestorePoint).Msg("suspended job left suspended (--restore-on-start=false)")
			d.jobs[rec.ID] = e
			continue
		}
		d.resume(e)
	}
}

// finishCancel completes a cancel the previous daemon did not finish.
func (d *Daemon) finishCancel(e *entry) {
	g, err := engine.Compile(d.types, e.rec.File, []byte(e.rec.Spec), d.defaults())
	if err == nil && g.Checkpointing.Externalized != api.RetainOnCancellation {
		_ = d.fs.RemoveAll(filepath.Join(d.cfg.CheckpointsDir, e.rec.ID))
	}
	e.rec.State = api.StateCanceled
	e.rec.Info.State = api.StateCanceled
	now := time.Now()
	e.rec.Info.EndTime = &now
	_ = d.reg.save(&e.rec)
	d.jobs[e.rec.ID] = e
}

func (d *Daemon) resume(e *entry) {
	log := d.log.With().Str("job", e.rec.ID).Logger()
	fail := func(err error) {
		log.Error().Err(err).Msg("cannot resume job")
		e.rec.State = api.StateFailed
		e.rec.Info.State = api.StateFailed
		e.rec.Info.Error = "cannot resume after daemon restart: " + err.Error()
		now := time.Now()
		e.rec.Info.EndTime = &now
		_ = d.reg.save(&e.rec)
		d.jobs[e.rec.ID] = e
	}
	g, err := engine.Compile(d.types, e.rec.File, []byte(e.rec.Spec), d.defaults())
	if err != nil {
		fail(err)
		return
	}
	// Trust only checkpoints up to the newest the job recorded as complete
	// (see LatestCompleteAtMost).
	dir, _, skipped, err := checkpoint.LatestCompleteAtMost(d.fs, d.cfg.CheckpointsDir, e.rec.ID, checkpoint.RecordedBound(e.rec.Info.RestorePointID))
	if err != nil {
		fail(err)
		return
	}
	for _, s := range skipped {
		log.Warn().Int64("checkpoint_id", s.ID).Err(s.Err).Msg("newest checkpoint is incomplete (torn by the crash); falling back to an older one")
	}
	listed, _ := checkpoint.List(d.fs, d.cfg.CheckpointsDir, e.rec.ID)
	o := engine.JobOptions{SubmitTime: e.rec.SubmitTime, Restarts: e.rec.Info.Restarts}
	for _, l := range listed {
		o.NextCheckpointID = max(o.NextCheckpointID, l.ID+1)
	}
	var restore *engine.Restore
	if rp := e.rec.Info.RestorePoint; rp != "" && !strings.HasPrefix(rp, filepath.Join(d.cfg.CheckpointsDir, e.rec.ID)+string(filepath.Separator)) {
		// A stop-with-savepoint committed after the newest checkpoint:
		// its output is visible, so the job must resume from it.
		if r, err := engine.LoadRestore(d.fs, rp); err == nil && (dir == "" || r.Meta.CheckpointID > checkpointID(dir)) {
			restore = r
			o.Retained = completeIDs(listed, r.Meta.CheckpointID, skipped)
			o.NextCheckpointID = max(o.NextCheckpointID, r.Meta.CheckpointID+1)
		} else if err != nil {
			log.Warn().Err(err).Str("savepoint", rp).Msg("stop savepoint unusable; resuming from checkpoints")
		}
	}
	switch {
	case restore != nil:
	case dir != "":
		restore, err = engine.LoadRestore(d.fs, dir)
		if err == nil {
			o.Retained = completeIDs(listed, restore.Meta.CheckpointID, skipped)
		}
	case e.rec.SavepointPath != "":
		log.Warn().Msg("no complete checkpoint; resuming from the savepoint the job was started from")
		restore, err = engine.LoadRestore(d.fs, e.rec.SavepointPath)
	default:
		log.Warn().Msg("no complete checkpoint; restarting the job from the beginning")
	}
	if err != nil {
		fail(err)
		return
	}
	from := "the beginning"
	if restore != nil {
		from = restore.Dir
	}
	log.Info().Str("from", from).Str("was", string(e.rec.State)).Msg("resuming job after daemon restart")
	d.start(e, g, restore, o)
}

// checkpointID is the id of a chk-<n> directory (0 if none).
func checkpointID(dir string) int64 {
	id, _ := strconv.ParseInt(strings.TrimPrefix(filepath.Base(dir), "chk-"), 10, 64)
	return id
}

// completeIDs lists the checkpoints up to the restored one that retention
// must keep managing (oldest first), leaving out the torn ones.
func completeIDs(listed []checkpoint.Listed, restored int64, skipped []checkpoint.Skipped) []int64 {
	torn := map[int64]bool{}
	for _, s := range skipped {
		torn[s.ID] = true
	}
	var ids []int64
	for _, l := range listed {
		if l.ID <= restored && !torn[l.ID] {
			ids = append(ids, l.ID)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
