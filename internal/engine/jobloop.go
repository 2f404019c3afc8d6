package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
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
	var poison poisonWatch
	for attempt := 0; ; attempt++ {
		var out outcome
		var err error
		var req request
		if restoreErr != nil {
			out, err = outFailed, restoreErr // no attempt: nothing to restore from
		} else {
			j.resolvePendingStops(restore)
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
		err = poison.check(err)
		j.setError(err)
		j.log.Error().Err(err).Int("attempt", attempt).Msg("job failed")
		j.setState(api.StateFailing)
		delay, ok := policy.OnFailure(time.Now())
		if !ok || errors.Is(err, runtime.ErrRestartsSuppressed) {
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
		restore, restoreErr = j.restartPoint(err)
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

// restartPoint is what the next attempt restores after failure, by the
// restore decision (see checkpoint.DecideRestore): the recorded restore
// point, else an older retained checkpoint or the savepoint the job started
// from, loudly; never a fresh start over committed output. A refusal counts
// as a failure of the attempt (a transient read error may pass), so the
// restart strategy decides whether the job tries again or is FAILED with
// the reason. A failure that lost the output of a checkpoint
// (runtime.RestoreBeforeError) rules out that checkpoint and every newer
// one; the snapshot chosen instead becomes the recorded restore point, so a
// later failure does not go back to the lost one. When nothing before it
// is left (a savepoint's own output lost), the job is FAILED at once.
func (j *Job) restartPoint(failure error) (*Restore, error) {
	f, err := RestoreFactsOf(j.env.FS, j.opts.CheckpointsDir, j.id, j.Recovery())
	if err != nil {
		return nil, err
	}
	f.LostFrom = restoreBefore(failure)
	r, d := ChooseRestore(j.env.FS, f, j.log)
	DiscardAbandoned(j.env.FS, SparingUncertain(d, j.uncertainIDs()), j.log)
	if f.LostFrom > 0 && (d.Action == checkpoint.RestoreLoad || d.Action == checkpoint.RestoreFresh) {
		var p *checkpoint.Point
		if r != nil {
			point := PointOf(r)
			p = &point
		}
		if err := j.record(p, d.Retained, d.NextID); err != nil {
			return nil, fmt.Errorf("record the restore point instead of lost checkpoint %d: %w", f.LostFrom, err)
		}
		j.noteRestoreBefore(failure, r)
	}
	switch d.Action {
	case checkpoint.RestoreLoad:
		j.setRestored(r)
		return r, nil
	case checkpoint.RestoreFresh:
		return nil, nil
	}
	if f.LostFrom > 0 {
		// Output lost with nothing before it to restore: no later
		// attempt can do better, so the job fails now, naming what was
		// lost (the sink's error names the transaction and its records).
		return nil, runtime.SuppressRestarts(fmt.Errorf("%s. What was lost: %w", d.Reason, failure))
	}
	return nil, errors.New(d.Reason)
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
		PersistFinal: j.opts.CheckpointsDir != "", Record: true},
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
	j.status.lastFigures = &f
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
