package runtime

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime/checkpoint"
)

// outcome is how an attempt ended.
type outcome int

const (
	outFinished outcome = iota + 1
	outCanceled
	outSuspended
	outFailed
)

// loop runs attempts until the job reaches a terminal state.
func (j *Job) loop() {
	defer close(j.done)
	defer j.wg.Wait()
	policy := NewRestartPolicy(j.graph.Restart, nil)
	restore := j.opts.Restore
	if restore != nil {
		j.setRestored(restore)
	}
	var restoreErr error
	for attempt := 0; ; attempt++ {
		var out outcome
		var err error
		var req request
		if restoreErr != nil {
			out, err = outFailed, restoreErr // no attempt: nothing to restore from
		} else {
			j.discardAbandoned(restore)
			out, err, req = j.runAttempt(attempt, restore)
		}
		switch out {
		case outFinished:
			j.setState(api.StateFinished)
			j.discardCheckpoints("job finished")
			return
		case outCanceled:
			j.finishCancel(req)
			return
		case outSuspended:
			j.setState(api.StateSuspended)
			if req.reply != nil { // nil: a suspend-stop, answered by the driver
				req.reply <- reply{}
			}
			return
		}
		j.setError(err)
		j.log.Error().Err(err).Int("attempt", attempt).Msg("job failed")
		j.setState(api.StateFailing)
		delay, ok := policy.OnFailure(time.Now())
		if !ok {
			j.setState(api.StateFailed)
			return
		}
		j.setState(api.StateRestarting)
		j.mu.Lock()
		j.status.restarts++
		j.mu.Unlock()
		j.log.Info().Dur("delay", delay).Int("restarts", attempt+1).Msg("job restarting")
		if req, stopped := j.waitRestart(delay); stopped {
			if req.kind == reqCancel {
				j.finishCancel(req)
			} else {
				j.setState(api.StateSuspended)
				req.reply <- reply{}
			}
			return
		}
		// On error the snapshot stays: the next round fails the same way
		// instead of starting over.
		next, rerr := j.restartPoint(restore, err)
		if restoreErr = rerr; rerr == nil {
			restore = next
			j.noteRestoreBefore(err, restore)
		}
	}
}

// waitRestart sleeps the restart delay, answering requests meanwhile. It
// returns the request that ended the job (cancel or suspend), if any.
func (j *Job) waitRestart(delay time.Duration) (request, bool) {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return request{}, false
		case r := <-j.requests:
			switch r.kind {
			case reqCancel:
				j.setState(api.StateCancelling)
				return r, true
			case reqSuspend:
				return r, true
			default:
				r.reply <- reply{err: api.Errorf(api.CodeConflict, "job %s is restarting; try again when it is RUNNING", j.id)}
			}
		}
	}
}

// restartPoint picks what the next attempt restores: the latest completed
// checkpoint or a stop savepoint that committed after it (falling back to
// older retained checkpoints, loudly), else what the job started from. When
// the job has completed snapshots but none can be read (an I/O error) and
// it started from nothing, it does not start over from the beginning, which
// would duplicate committed output: the error counts as a failure and the
// restart strategy retries. A failure that lost the output of a checkpoint
// (RestoreBeforeError) restores only from snapshots before it.
func (j *Job) restartPoint(initial *Restore, failure error) (*Restore, error) {
	before := restoreBefore(failure)
	j.mu.Lock()
	if before > 0 {
		j.status.retained = idsBelow(j.status.retained, before)
	}
	retained := append([]int64(nil), j.status.retained...)
	rp := j.status.restorePoint
	j.mu.Unlock()
	var lost *Restore // the snapshot started from, when it is too new
	if before > 0 {
		if rp != nil && rp.ID >= before {
			rp = nil
		}
		if initial != nil && initial.Meta.CheckpointID >= before {
			lost, initial = initial, nil
		}
	}
	var lastErr error
	if rp != nil && rp.Kind == checkpoint.StopSavepoint.String() && (len(retained) == 0 || rp.ID > retained[len(retained)-1]) {
		// A stop committed after the last checkpoint: resume from it.
		r, err := LoadRestore(j.env.FS, rp.Path)
		if err == nil {
			j.setRestored(r)
			return r, nil
		}
		lastErr = err
		j.log.Warn().Err(err).Str("savepoint", rp.Path).Msg("stop savepoint unusable for restore; trying checkpoints")
	}
	for i := len(retained) - 1; i >= 0; i-- {
		dir := checkpoint.CheckpointDir(j.opts.CheckpointsDir, j.id, retained[i])
		r, err := LoadRestore(j.env.FS, dir)
		if err == nil {
			j.setRestored(r)
			return r, nil
		}
		lastErr = err
		j.log.Warn().Err(err).Int64("checkpoint_id", retained[i]).Msg("checkpoint unusable for restore; trying an older one")
	}
	if initial != nil {
		// An older snapshot: sinks take back what was committed after it.
		j.setRestored(initial)
		return initial, nil
	}
	if lastErr != nil {
		return nil, fmt.Errorf("no completed checkpoint or savepoint of the job can be read (not starting over, which would repeat committed output): %w", lastErr)
	}
	if lost != nil {
		return nil, fmt.Errorf("the output of checkpoint %d is lost and no snapshot of the job from before it is left (the job resumed from %s); restore it by hand from an earlier savepoint", before, lost.Dir)
	}
	return nil, nil
}

func (j *Job) setRestored(r *Restore) {
	j.mu.Lock()
	j.status.restoredFrom = &api.RestoredInfo{ID: r.Meta.CheckpointID, Kind: r.Meta.Kind, Path: r.Dir, RestoreTime: time.Now()}
	j.status.counts.Restored++
	j.mu.Unlock()
}

// runAttempt starts one execution and drives it until it ends.
func (j *Job) runAttempt(attempt int, restore *Restore) (outcome, error, request) {
	exec, err := newExecution(j, attempt, restore)
	if err != nil {
		return outFailed, fmt.Errorf("start attempt %d: %w", attempt, err), request{}
	}
	j.mu.Lock()
	nextID, retained := j.status.nextID, j.status.retained
	j.mu.Unlock()
	cfg := j.graph.Checkpointing
	coord := checkpoint.New(checkpoint.Config{Interval: cfg.Interval, Timeout: cfg.Timeout, MinPause: cfg.MinPause,
		MaxConcurrent: cfg.MaxConcurrent, TolerableFailures: cfg.TolerableFailures, Retained: cfg.Retained,
		PersistFinal: j.opts.CheckpointsDir != ""},
		len(exec.tasks), nextID, retained)
	d := newDriver(j, exec, coord)
	exec.start()
	j.mu.Lock()
	j.status.exec = exec
	j.mu.Unlock()
	j.setState(api.StateRunning)
	defer j.retireExecution(exec)

	d.apply(coord.Step(checkpoint.Tick{Now: time.Now()}))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sourcesEnded, tasksDone := 0, 0
	for {
		if d.failErr != nil {
			d.shutdown(checkpoint.ReasonJobFailing)
			return outFailed, d.failErr, request{}
		}
		resetTimer(timer, coord.Wake())
		select {
		case m := <-exec.events:
			switch m := m.(type) {
			case ackMsg:
				d.apply(coord.Step(checkpoint.AckEvent{ID: m.id, Handle: m.h, Now: time.Now()}))
			case declineMsg:
				d.apply(coord.Step(checkpoint.DeclineEvent{ID: m.id, Task: m.task, Err: m.err, Now: time.Now()}))
			case sourceEndedMsg:
				sourcesEnded++
				if sourcesEnded == len(exec.sources) {
					d.request(checkpoint.Request{Kind: checkpoint.Final}, nil)
				}
			case taskDoneMsg:
				if m.err != nil {
					d.shutdown(checkpoint.ReasonJobFailing)
					return outFailed, m.err, request{}
				}
				tasksDone++
				if tasksDone == len(exec.tasks) {
					exec.allDone = true
					suspended := d.stopped != nil && d.stopSuspends
					d.shutdown(checkpoint.ReasonJobStopping)
					if suspended {
						return outSuspended, nil, request{}
					}
					return outFinished, nil, request{}
				}
			}
		case r := <-j.requests:
			switch r.kind {
			case reqCancel:
				j.setState(api.StateCancelling)
				d.shutdown(checkpoint.ReasonJobStopping)
				return outCanceled, nil, r
			case reqSuspend:
				d.shutdown(checkpoint.ReasonJobStopping)
				return outSuspended, nil, r
			case reqSavepoint:
				d.request(checkpoint.Request{Kind: checkpoint.Savepoint, Dir: r.dir}, r.reply)
			case reqStop:
				d.stopSuspends = r.suspend
				d.request(checkpoint.Request{Kind: checkpoint.StopSavepoint, Dir: r.dir, Drain: r.drain}, r.reply)
			}
		case p := <-d.persisted:
			d.apply(coord.Step(p))
		case <-timer.C:
			d.apply(coord.Step(checkpoint.Tick{Now: time.Now()}))
		}
	}
}

func resetTimer(t *time.Timer, at time.Time) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	if at.IsZero() {
		t.Reset(time.Hour)
		return
	}
	t.Reset(max(time.Until(at), 0))
}

// retireExecution folds an ended attempt's figures into the job's totals.
func (j *Job) retireExecution(e *execution) {
	f := e.totals()
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range f.in {
		j.status.baseIn[i] += f.in[i]
		j.status.baseOut[i] += f.out[i]
		if j.status.baseGauges[i] == nil {
			j.status.baseGauges[i] = map[string]int64{}
		}
		for k, v := range f.values[i] {
			if f.counters[k] {
				j.status.baseGauges[i][k] += v
			} else {
				j.status.baseGauges[i][k] = v // the last value seen
			}
		}
	}
	j.status.exec = nil
}

// finishCancel applies the externalized-checkpoint retention and ends the
// job CANCELED.
func (j *Job) finishCancel(req request) {
	if j.graph.Checkpointing.Externalized == api.RetainOnCancellation {
		j.log.Info().Str("resume_from", j.ResumeFrom()).Msg("checkpoints retained on cancellation")
	} else {
		j.discardCheckpoints("job canceled (delete-on-cancellation)")
	}
	j.setState(api.StateCanceled)
	req.reply <- reply{}
}

// discardAbandoned deletes the job's checkpoints newer than the snapshot an
// attempt restores (all of them for a fresh start): checkpoints the job
// aborted, or that a crash left unrecorded, whose part of the output the
// restored sinks clean up. Left on disk, one could look complete to a later
// recovery and point at files that no longer exist.
func (j *Job) discardAbandoned(restore *Restore) {
	if j.opts.CheckpointsDir == "" {
		return
	}
	var from int64
	if restore != nil {
		from = restore.Meta.CheckpointID
	}
	list, err := checkpoint.List(j.env.FS, j.opts.CheckpointsDir, j.id)
	if err != nil {
		j.log.Warn().Err(err).Msg("could not list checkpoints")
		return
	}
	for _, l := range list {
		if l.ID <= from || (restore != nil && l.Dir == restore.Dir) {
			continue
		}
		if err := checkpoint.Dispose(j.env.FS, l.Dir); err != nil {
			j.log.Warn().Err(err).Str("dir", l.Dir).Msg("could not delete an abandoned checkpoint")
			continue
		}
		j.log.Info().Int64("checkpoint_id", l.ID).Msg("deleted a checkpoint newer than the restored one (aborted or not recorded as completed)")
	}
}

// discardCheckpoints deletes the job's checkpoint directory.
func (j *Job) discardCheckpoints(why string) {
	if j.opts.CheckpointsDir == "" {
		return
	}
	dir := filepath.Join(j.opts.CheckpointsDir, j.id)
	if err := j.env.FS.RemoveAll(dir); err != nil && !errors.Is(err, errNotExist) {
		j.log.Warn().Err(err).Str("dir", dir).Msg("could not delete checkpoints")
		return
	}
	j.mu.Lock()
	j.status.retained = nil
	if j.status.restoredFrom == nil || filepath.Dir(j.status.resumeFrom) == dir {
		j.status.resumeFrom = ""
	}
	for i := range j.status.history {
		if j.status.history[i].Kind == checkpoint.Periodic.String() && j.status.history[i].Status == checkpoint.StatusCompleted.String() {
			j.status.history[i].Discarded = true
		}
	}
	j.mu.Unlock()
	j.log.Info().Str("dir", dir).Str("reason", why).Msg("checkpoints deleted")
}
