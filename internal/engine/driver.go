package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

var errNotExist = fs.ErrNotExist

// driver carries out the coordinator's decisions for one attempt: it does
// the I/O (directories, metadata, deletions), talks to the subtasks and
// answers savepoint requests. It runs on the job loop.
type driver struct {
	j     *Job
	exec  *execution
	coord *checkpoint.Coordinator

	nextRef   int64
	waiters   map[int64]chan reply // savepoint/stop callers by request ref
	dirs      map[int64]string     // snapshot directory by checkpoint id
	sizes     map[int64]int64
	written   map[int64]int64 // of incremental checkpoints: bytes written
	persisted chan checkpoint.PersistedEvent
	persistWG sync.WaitGroup
	ended     chan struct{} // closed when the attempt ends
	failErr   error
	snapFS    map[int64]snapshotFS // the snapshots' views of the FS (storagecost.go)
	stopped   *pendingStop         // a completed stop-with-savepoint, answered when the job finished
	// stopSuspends: the pending stop is a daemon shutdown's (the job ends
	// SUSPENDED, not FINISHED).
	stopSuspends bool
}

type pendingStop struct {
	ref int64
	rep reply
}

func newDriver(j *Job, e *execution, c *checkpoint.Coordinator) *driver {
	return &driver{j: j, exec: e, coord: c, waiters: map[int64]chan reply{}, dirs: map[int64]string{},
		sizes: map[int64]int64{}, written: map[int64]int64{}, persisted: make(chan checkpoint.PersistedEvent), ended: make(chan struct{})}
}

func (d *driver) fsys() vfs.FS { return d.j.env.FS }

// request submits a savepoint, stop or final checkpoint request.
func (d *driver) request(r checkpoint.Request, replyTo chan reply) {
	d.nextRef++
	r.Ref = d.nextRef
	if replyTo != nil {
		d.waiters[r.Ref] = replyTo
	}
	d.apply(d.coord.Step(checkpoint.RequestEvent{Req: r, Now: time.Now()}))
}

// apply carries out decisions; follow-up events (a failed directory
// creation becomes a decline) are fed back until none remain.
func (d *driver) apply(ds []checkpoint.Decision) {
	for len(ds) > 0 {
		dec := ds[0]
		ds = ds[1:]
		ds = append(ds, d.applyOne(dec)...)
	}
	d.j.mu.Lock()
	d.j.status.nextID = d.coord.NextID()
	d.j.status.retained = d.coord.Retained()
	d.j.mu.Unlock()
}

func (d *driver) applyOne(dec checkpoint.Decision) []checkpoint.Decision {
	switch x := dec.(type) {
	case checkpoint.Start:
		return d.start(x)
	case checkpoint.WriteMetadata:
		d.writeMetadata(x)
	case checkpoint.Record:
		return d.record(x)
	case checkpoint.Complete:
		d.complete(x)
	case checkpoint.Abort:
		d.abort(x)
	case checkpoint.Discard:
		d.discard(x.ID)
	case checkpoint.Reject:
		d.answer(x.Req.Ref, reply{err: api.Errorf(api.CodeConflict, "%s refused: %s", x.Req.Kind, x.Reason)})
	case checkpoint.FailJob:
		d.failErr = x.Err
	default:
		panic(fmt.Sprintf("runtime: unknown checkpoint decision %T (bug)", dec))
	}
	return nil
}

func (d *driver) start(s checkpoint.Start) []checkpoint.Decision {
	dir, err := d.snapshotDir(s)
	info := api.CheckpointInfo{ID: s.ID, Kind: s.Kind.String(), Status: checkpoint.StatusInProgress.String(), TriggerTime: s.Timestamp, Path: dir}
	d.j.trigger(info)
	if err != nil {
		return d.coord.Step(checkpoint.DeclineEvent{ID: s.ID, Task: -1, Err: err, Now: time.Now()})
	}
	d.dirs[s.ID] = dir
	drain := s.Req != nil && s.Req.Drain
	d.exec.trigger(Barrier{ID: s.ID, Kind: s.Kind, Timestamp: s.Timestamp, Dir: dir, FS: d.newSnapshotFS(s.ID, s.Timestamp)}, drain)
	return nil
}

// snapshotDir creates the directory a snapshot is written to.
func (d *driver) snapshotDir(s checkpoint.Start) (string, error) {
	if !s.Persist {
		return "", nil
	}
	var dir string
	if s.Kind.IsSavepoint() {
		target := d.j.opts.SavepointsDir
		if s.Req != nil && s.Req.Dir != "" {
			target = s.Req.Dir
		}
		if target == "" {
			return "", api.Errorf(api.CodeUsage, "no savepoint directory: give one (flinkgo savepoint JOB DIR, or --savepoint-path for stop) or set state.savepoints.dir in the daemon config")
		}
		dir = checkpoint.NewSavepointDir(target, d.j.id, s.ID)
		if ok, _ := vfs.Exists(d.fsys(), dir); ok {
			return "", fmt.Errorf("savepoint directory %s already exists; refusing to overwrite it", dir)
		}
	} else {
		if d.j.opts.CheckpointsDir == "" {
			return "", errors.New("no checkpoint directory: set state.checkpoints.dir in the daemon config")
		}
		dir = checkpoint.CheckpointDir(d.j.opts.CheckpointsDir, d.j.id, s.ID)
		// A directory of this id can only be the torn leftover of a crash.
		if err := d.fsys().RemoveAll(dir); err != nil {
			return "", err
		}
	}
	if err := vfs.MkdirAllDurable(d.fsys(), dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return dir, nil
}

func (d *driver) writeMetadata(w checkpoint.WriteMetadata) {
	dir := d.dirs[w.ID]
	m := d.metadata(w)
	d.sizes[w.ID] = m.Size()
	if n, incremental := m.CheckpointedSize(); incremental {
		d.written[w.ID] = n
	}
	fsys := d.snapshotFSOf(w.ID)
	d.persistWG.Add(1)
	go func() {
		defer d.persistWG.Done()
		err := d.j.env.Fire("checkpoint.publish-metadata", w.ID)
		if err == nil && w.Kind == checkpoint.StopSavepoint {
			err = d.j.markPendingStop(w.ID, dir)
		}
		if err == nil {
			err = checkpoint.PublishMetadata(fsys, dir, m)
		}
		if err == nil {
			err = d.j.env.Fire("checkpoint.metadata-published", w.Kind.String(), w.ID)
		}
		select {
		case d.persisted <- checkpoint.PersistedEvent{ID: w.ID, Err: err, Now: time.Now()}:
		case <-d.ended:
		}
	}()
}

func (d *driver) metadata(w checkpoint.WriteMetadata) *checkpoint.Metadata {
	g := d.j.graph
	m := &checkpoint.Metadata{JobID: d.j.id, JobName: g.Spec.Name, CheckpointID: w.ID, Kind: w.Kind.String(),
		Timestamp: w.Trigger, DurationMs: time.Since(w.Trigger).Milliseconds(),
		SpecFingerprint: api.Fingerprint(g.Source), Spec: string(g.Source), MaxParallelism: g.MaxParallelism, Drained: w.Drain}
	byUID := map[string]*checkpoint.OperatorState{}
	for _, v := range g.Vertices {
		m.Operators = append(m.Operators, checkpoint.OperatorState{UID: v.Op.UID, Type: v.Op.Type, Parallelism: v.Parallelism,
			State: recordMeaning(stateMeaning(v))})
	}
	for i := range m.Operators {
		byUID[m.Operators[i].UID] = &m.Operators[i]
	}
	for _, h := range w.Handles {
		op := byUID[h.UID]
		op.Subtasks = append(op.Subtasks, h)
	}
	for i := range m.Operators {
		sort.Slice(m.Operators[i].Subtasks, func(a, b int) bool { return m.Operators[i].Subtasks[a].Subtask < m.Operators[i].Subtasks[b].Subtask })
	}
	return m
}

// record records a durable snapshot that commits as the job's restore
// point; the coordinator completes it only once that is durable, and aborts
// it when it fails.
func (d *driver) record(r checkpoint.Record) []checkpoint.Decision {
	err := d.j.record(&checkpoint.Point{ID: r.ID, Kind: r.Kind, Dir: d.dirs[r.ID]}, r.Retained, r.NextID)
	return d.coord.Step(checkpoint.RecordedEvent{ID: r.ID, Err: err, Now: time.Now()})
}

func (d *driver) complete(c checkpoint.Complete) {
	d.exec.forgetWrites(c.ID)
	dir := d.dirs[c.ID]
	delete(d.dirs, c.ID)
	size, written := d.sizes[c.ID], d.written[c.ID]
	delete(d.sizes, c.ID)
	delete(d.written, c.ID)
	info := api.CheckpointInfo{ID: c.ID, Kind: c.Kind.String(), Status: checkpoint.StatusCompleted.String(),
		DurationMs: c.Duration.Milliseconds(), Size: size, CheckpointedSize: written, Path: dir, Storage: d.storageCost(c.ID)}
	d.j.complete(info, c.Kind)
	d.j.log.Info().Int64("checkpoint_id", c.ID).Str("kind", c.Kind.String()).Int64("bytes", size).
		Int64("duration_ms", c.Duration.Milliseconds()).Str("path", dir).Msg("checkpoint completed")
	// The restore point was recorded (Record) before this: once sinks
	// commit, a crash restores from this snapshot.
	if c.Kind.Commits() {
		d.exec.notify(CtrlComplete, c.ID)
	}
	if c.Req == nil {
		return
	}
	if c.Kind == checkpoint.StopSavepoint {
		// The stop succeeds when the job has finished, not before: a
		// failure after the commit restarts the job from this savepoint.
		d.stopped = &pendingStop{ref: c.Req.Ref, rep: reply{path: dir, id: c.ID}}
		return
	}
	d.answer(c.Req.Ref, reply{path: dir, id: c.ID})
}

func (d *driver) abort(a checkpoint.Abort) {
	dir := d.dirs[a.ID]
	delete(d.dirs, a.ID)
	delete(d.sizes, a.ID)
	delete(d.written, a.ID)
	delete(d.snapFS, a.ID)
	if dir != "" && a.Keep {
		d.j.recordUncertain(a.ID)
		d.j.log.Warn().Str("dir", dir).Msg("checkpoint kept: its record write failed and may still have been applied; the next restore decision keeps or deletes it")
	} else if dir != "" {
		// Subtasks may still be writing into it: remove it once they are done.
		exec := d.exec
		d.j.wg.Add(1)
		go func() {
			defer d.j.wg.Done()
			exec.abortWrites(a.ID)
			if err := d.fsys().RemoveAll(dir); err != nil {
				d.j.log.Warn().Err(err).Str("dir", dir).Msg("could not remove aborted checkpoint")
			}
		}()
	}
	d.j.fail(a.ID, a.Kind, a.Err)
	ev := d.j.log.Warn()
	if !a.Reason.CountsAsFailure() {
		ev = d.j.log.Info()
	}
	ev.Int64("checkpoint_id", a.ID).Str("kind", a.Kind.String()).Str("reason", a.Reason.String()).Err(a.Err).Msg("checkpoint aborted")
	d.exec.notify(CtrlAbort, a.ID)
	if a.Req != nil {
		code := api.CodeFailed
		if a.Reason == checkpoint.ReasonTimeout {
			code = api.CodeTimeout
		}
		d.answer(a.Req.Ref, reply{err: &api.Error{Code: code, Message: fmt.Sprintf("%s %d failed: %v", a.Kind, a.ID, a.Err)}})
	}
}

func (d *driver) discard(id int64) {
	dir := checkpoint.CheckpointDir(d.j.opts.CheckpointsDir, d.j.id, id)
	d.j.markDiscarded(id)
	sweep := d.j.graph.StateBackend == api.BackendPebble
	keepFrom, newest := d.sweepKeepFrom()
	d.j.wg.Add(1)
	go func() {
		defer d.j.wg.Done()
		if err := d.j.env.Fire("checkpoint.discard", id); err != nil {
			d.j.log.Warn().Err(err).Int64("checkpoint_id", id).Msg("could not discard subsumed checkpoint")
			return
		}
		if err := checkpoint.Dispose(d.fsys(), dir); err != nil {
			d.j.log.Warn().Err(err).Int64("checkpoint_id", id).Msg("could not discard subsumed checkpoint")
			return
		}
		if !sweep {
			return
		}
		// The shared files of incremental checkpoints no complete one
		// lists any more (checkpoint.SharedGarbage).
		deleted, err := checkpoint.SweepShared(d.fsys(), d.j.opts.CheckpointsDir, d.j.id, keepFrom, newest)
		if err != nil {
			d.j.log.Warn().Err(err).Msg("could not sweep the shared files of incremental checkpoints")
		}
		if len(deleted) > 0 {
			d.j.log.Debug().Int("files", len(deleted)).Int64("keep_from", keepFrom).Msg("swept shared files")
		}
	}()
}

// sweepKeepFrom is the lowest checkpoint id whose uploads a sweep keeps
// whether a complete checkpoint lists them or not: the oldest checkpoint
// in progress, and none newer than the newest retained (see the
// argument in incremental.go); and that newest retained checkpoint (0:
// none), which the sweep must find complete or a newer one.
func (d *driver) sweepKeepFrom() (keepFrom, newest int64) {
	keepFrom = d.coord.NextID()
	for _, id := range d.coord.Pending() {
		keepFrom = min(keepFrom, id)
	}
	if r := d.coord.Retained(); len(r) > 0 {
		newest = slices.Max(r)
		keepFrom = min(keepFrom, newest+1)
	}
	return keepFrom, newest
}

func (d *driver) answer(ref int64, r reply) {
	if ch, ok := d.waiters[ref]; ok {
		delete(d.waiters, ref)
		ch <- r
	}
}

// finishStop answers a completed stop: with its savepoint when the job
// finished, with an error when the attempt failed after the savepoint.
func (d *driver) finishStop(finished bool) {
	if d.stopped == nil {
		return
	}
	rep := d.stopped.rep
	if !finished {
		rep = reply{err: api.Errorf(api.CodeFailed, "the job failed after its stop savepoint %s completed; it resumes from that savepoint", rep.path)}
	}
	d.answer(d.stopped.ref, rep)
	d.stopped = nil
}

// shutdown ends the attempt: cancel the subtasks, wait for them and for
// metadata writes in flight, then abort what is pending.
func (d *driver) shutdown(reason checkpoint.Reason) {
	d.exec.cancel()
	d.exec.wait()
	close(d.ended)
	d.persistWG.Wait()
	d.apply(d.coord.Step(checkpoint.ShutdownEvent{Reason: reason, Now: time.Now()}))
	d.finishStop(reason == checkpoint.ReasonJobStopping && d.exec.allDone)
	for ref := range d.waiters {
		d.answer(ref, reply{err: api.Errorf(api.CodeConflict, "job %s stopped before the savepoint completed", d.j.id)})
	}
}
