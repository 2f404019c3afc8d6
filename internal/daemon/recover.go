package daemon

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
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
		d.recoverRecord(rec)
	}
	d.trimEnded()
}

// recoverRecord takes over one job from its registry record: history, a
// cancel to finish, or a job to resume.
func (d *Daemon) recoverRecord(rec *Record) {
	e := &entry{rec: *rec}
	d.restoreJournal(e)
	switch {
	case rec.State.Terminal():
		d.put(e)
	case rec.State == api.StateCancelling:
		d.finishCancel(e)
	case rec.State == api.StateSuspended && !d.restoreOnStart && d.cluster == nil:
		d.log.Info().Str("job", rec.ID).Str("restore_point", restorePointDir(rec.Recovery)).Msg("suspended job left suspended (--restore-on-start=false)")
		d.put(e)
	default:
		d.resume(e)
	}
}

func (d *Daemon) put(e *entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.jobs[e.rec.ID] = e
}

// finishCancel completes a cancel the previous daemon did not finish.
func (d *Daemon) finishCancel(e *entry) {
	g, err := engine.Compile(d.types, e.rec.File, []byte(e.rec.Spec), d.defaults())
	if err == nil && g.Checkpointing.Externalized != api.RetainOnCancellation {
		_ = d.fs.RemoveAll(vfs.Join(d.cfg.CheckpointsDir, e.rec.ID))
	}
	e.rec.State = api.StateCanceled
	e.rec.Info.State = api.StateCanceled
	now := time.Now()
	e.rec.Info.EndTime = &now
	_ = d.reg.save(&e.rec)
	d.put(e)
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
		d.put(e)
	}
	g, err := engine.Compile(d.types, e.rec.File, []byte(e.rec.Spec), d.defaults())
	if err != nil {
		fail(err)
		return
	}
	rec, err := e.rec.Recovery.recovery()
	if err != nil {
		fail(fmt.Errorf("registry record %s: %w", filepath.Join(d.reg.jobDir(e.rec.ID), "job.json"), err))
		return
	}
	f, err := engine.RestoreFactsOf(d.fs, d.cfg.CheckpointsDir, e.rec.ID, rec)
	if err != nil {
		fail(err)
		return
	}
	restore, dec := engine.ChooseRestore(d.fs, f, log)
	if dec.Action == checkpoint.RestoreRefuse {
		fail(errors.New(dec.Reason))
		return
	}
	engine.DiscardAbandoned(d.fs, dec, log)
	rec.Retained, rec.NextID = dec.Retained, dec.NextID
	from := "the beginning (the job never completed a checkpoint)"
	if restore != nil {
		from = restore.Dir
	}
	log.Info().Str("from", from).Str("was", string(e.rec.State)).Msg("resuming job after daemon restart")
	d.start(e, g, restore, engine.JobOptions{SubmitTime: e.rec.SubmitTime, Recovery: &rec})
}

func restorePointDir(r RecoveryRecord) string {
	if r.RestorePoint == nil {
		return ""
	}
	return r.RestorePoint.Dir
}

// restoreJournal takes back the events and exceptions the previous daemon
// kept of e's job, and marks in its event log where they end.
func (d *Daemon) restoreJournal(e *entry) {
	// The record's last failure, for a job no journal was written for.
	defer e.live.noteFailure(&e.rec.Info)
	j, err := d.reg.loadJournal(e.rec.ID)
	if err != nil {
		d.log.Warn().Err(err).Str("job", e.rec.ID).Msg("the job's events from before the restart are unreadable and not shown")
		return
	}
	if len(j.Events) == 0 && len(j.Exceptions) == 0 {
		return
	}
	e.live.restore(j)
	e.live.note(time.Now(), "daemon", "info", "daemon restarted: the earlier events are from the previous daemon")
}
