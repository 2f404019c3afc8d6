package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/pebblestate"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// GateCapacity is how many batches an input channel buffers before its
// producer blocks (backpressure). Small on purpose: buffered records are
// live heap the garbage collector marks on every cycle, and 4 batches
// already keep both sides of a channel busy (8 made the expression
// pipeline ~10% slower, all of it in GC).
const GateCapacity = 4

// execution is one attempt of a job: its subtasks, wired together, and the
// channel through which they report to the job loop.
type execution struct {
	job     *Job
	g       *Graph
	attempt int
	log     zerolog.Logger

	tasks   []*subtask
	sources []*subtask
	// restoreFrom is the snapshot this attempt restores (nil: fresh start),
	// decoded before any subtask starts.
	restoreFrom *Restore
	snaps       map[string][]*state.Snapshot

	writesMu   sync.Mutex
	writesCond *sync.Cond
	writes     map[int64]*inflight // state writes in flight, by checkpoint

	opened     atomic.Int32  // subtasks whose operator opened (Job.Started)
	allDone    bool          // every subtask finished (job loop only)
	done       chan struct{} // closed to cancel every subtask
	cancelOnce sync.Once
	wg         sync.WaitGroup // subtask goroutines and async state writes
	events     chan any       // to the job loop
}

// Messages from subtasks to the job loop.
type (
	ackMsg struct {
		id int64
		h  checkpoint.Handle
	}
	declineMsg struct {
		id   int64
		task int
		err  error
	}
	sourceEndedMsg struct{ task int }
	taskDoneMsg    struct {
		task int
		err  error
	}
)

func newExecution(j *Job, attempt int, restore *Restore) (*execution, error) {
	g := j.graph
	e := &execution{job: j, g: g, attempt: attempt, log: j.log, restoreFrom: restore,
		done: make(chan struct{}), events: make(chan any, 4*g.NumSubtasks()+16)}
	if restore != nil {
		snaps, err := restore.loadSnapshots(j.env, j.id, g)
		if err != nil {
			return nil, err
		}
		e.snaps = snaps
	}
	byVertex := make([][]*subtask, len(g.Vertices))
	for _, v := range g.Vertices {
		for i := 0; i < v.Parallelism; i++ {
			t := &subtask{exec: e, v: v, index: i, id: len(e.tasks), wake: make(chan struct{}, 1)}
			t.clock.inWM.Store(runtime.MinWatermark)
			t.clock.outWM.Store(runtime.MinWatermark)
			channels := 0
			for _, in := range v.Inputs {
				if in.Part == Forward {
					channels++
				} else {
					channels += in.From.Parallelism
				}
			}
			t.gate = NewGate(channels, GateCapacity)
			t.aligner = NewAligner(channels, g.Checkpointing.Mode != "at-least-once")
			t.dataEnded = make([]bool, channels)
			if v.Plan.NewSource != nil {
				t.src = v.Plan.NewSource()
				e.sources = append(e.sources, t)
			} else {
				t.op = v.Plan.NewOperator()
			}
			e.tasks = append(e.tasks, t)
			byVertex[v.Index] = append(byVertex[v.Index], t)
		}
	}
	e.chainTasks(byVertex)
	e.wire(byVertex)
	e.wireHandBack(byVertex)
	return e, nil
}

// wire connects every subtask's output to its readers' gates. Channel
// numbers in a gate follow the order of the reader's inputs.
func (e *execution) wire(byVertex [][]*subtask) {
	edges := make([][]*edge, len(e.tasks))
	for _, v := range e.g.Vertices {
		readers := byVertex[v.Index]
		base := 0
		for k, in := range v.Inputs {
			writers := byVertex[in.From.Index]
			for wi, w := range writers {
				ed := &edge{part: in.Part, tag: in.Side, maxPar: e.g.MaxParallelism, input: k}
				if in.Key != nil {
					ed.key = in.Key()
				}
				// A record leaving a recycling source's chain is copied.
				ed.copy = in.From.copiesOut
				if in.Part == Forward || v.chainHead != nil { // a chain's edges are one to one
					ed.targets = []target{{gate: readers[wi].gate, channel: base}}
					if r := readers[wi]; r.head != nil {
						ed.targets[0].local = r // chained: this is its only input
						ed.copy = false
					}
				} else {
					for _, r := range readers {
						ed.targets = append(ed.targets, target{gate: r.gate, channel: base + wi})
					}
				}
				ed.noValues = v.valuesUnread
				ed.rewrite = ed.copy || ed.noValues
				edges[w.id] = append(edges[w.id], ed)
			}
			if in.Part == Forward {
				base++
			} else {
				base += len(writers)
			}
		}
	}
	for _, t := range e.tasks {
		t.out = newOutput(edges[t.id], e.done, &t.recordsOut)
	}
	e.wireTimes()
}

// start launches every subtask.
func (e *execution) start() {
	// Every subtask is counted before any runs: a chain's head reports its
	// members when it ends, which may be before this loop reached them.
	e.wg.Add(len(e.tasks))
	for _, t := range e.tasks {
		t.times.started = monoNow()
	}
	for _, t := range e.tasks {
		if t.head == nil { // a chain member runs on its head's goroutine
			go t.run()
		}
	}
}

// newContext is what subtask t's operator sees; its state must be restored.
func (e *execution) newContext(t *subtask) *runtime.Context {
	j := e.job
	o := runtime.ContextOptions{JobID: j.id, JobName: e.g.Spec.Name, UID: t.v.Op.UID, Type: t.v.Op.Type,
		Subtask: t.index, Parallelism: t.v.Parallelism, MaxParallelism: e.g.MaxParallelism,
		Attempt: e.attempt, State: t.state, Keyed: t.keyed, Checkpointing: e.g.Checkpointing,
		FS: j.env.FS, Stdout: j.env.printOut(), Faults: j.env.Faults, Wakeup: t.wake, Metrics: &t.gauges,
		Watermark: t.currentWatermark, AllowNonEmptyOutput: j.env.AllowNonEmptyOutput, JobEnded: j.env.JobEnded, Done: e.done,
		OnError: t.v.Op.OnError, RecordsIn: &t.recordsIn,
		Log: e.log.With().Str("operator", t.v.Op.UID).Int("subtask", t.index).Logger()}
	if t.clock.timers != nil {
		o.Timers = t.clock.timers
	}
	if e.restoreFrom != nil {
		o.Restored = true
		o.RestoredCheckpoint = e.restoreFrom.Meta.CheckpointID
		o.RestoredJobID = e.restoreFrom.Meta.JobID
	}
	return runtime.NewContext(o)
}

// restoreInto gives a subtask its state (on the subtask's goroutine).
func (e *execution) restoreInto(t *subtask) error {
	old := e.snaps[t.v.Op.UID]
	if old != nil {
		t.state = state.RestoreOperatorState(old, t.index, t.v.Parallelism)
	} else {
		t.state = state.NewOperatorState()
	}
	if t.v.Plan.KeyedInput || t.v.Plan.GlobalKey {
		rng := state.RangeForSubtask(e.g.MaxParallelism, t.v.Parallelism, t.index)
		kb := state.NewKeyedBackend(e.g.MaxParallelism, rng)
		if e.g.StateBackend == api.BackendPebble {
			var err error
			if kb, err = e.openPebble(t, rng); err != nil {
				return fmt.Errorf("operator %s subtask %d: %w", t.v.Op.UID, t.index, err)
			}
		}
		kb.Restore(old)
		t.keyed = kb
	}
	return nil
}

// openPebble opens a pebble subtask's DB: from the files of the
// incremental checkpoint restored, if it is one, else empty (a canonical
// snapshot is then loaded into it by Restore).
func (e *execution) openPebble(t *subtask, rng state.KeyGroupRange) (*state.KeyedBackend, error) {
	fsys, root := e.env().pebble()
	db := e.restoredDB(t)
	dir, err := pebblestate.PrepareSubtask(fsys, root, e.job.id, t.v.Op.UID, t.index, e.attempt)
	if err == nil && db != nil {
		err = downloadDB(e.env().FS, e.restoreFrom.Dir, db, fsys, dir)
	}
	if err != nil {
		_ = fsys.RemoveAll(dir)
		return nil, err
	}
	s, err := pebblestate.Open(fsys, dir)
	if err != nil {
		_ = fsys.RemoveAll(dir)
		return nil, err
	}
	kb := state.NewKeyedBackendOn(e.g.MaxParallelism, rng, removing{s})
	if db != nil {
		if err := kb.RestoreStore(); err != nil {
			_ = kb.Close()
			return nil, fmt.Errorf("restore from %s: %w", e.restoreFrom.Dir, err)
		}
	}
	if e.g.Incremental {
		t.incr = newIncremental(s, fsys)
		if db != nil && vfs.Dir(vfs.Clean(e.restoreFrom.Dir)) == vfs.Join(e.job.opts.CheckpointsDir, e.job.id) {
			t.incr.adopt(db)
		}
	}
	return kb, nil
}

// restoredDB is the DB files the restored snapshot holds for subtask t
// (nil: none, the state file holds its state). At another parallelism
// loadSnapshots read the old DBs into the canonical form instead.
func (e *execution) restoredDB(t *subtask) *checkpoint.DBFiles {
	if e.restoreFrom == nil {
		return nil
	}
	op := e.restoreFrom.Meta.Operator(t.v.Op.UID)
	if op == nil || op.Parallelism != t.v.Parallelism {
		return nil
	}
	for _, h := range op.Subtasks {
		if h.Subtask == t.index {
			return h.DB
		}
	}
	return nil
}

func (e *execution) env() *Env { return e.job.env }

func (e *execution) cancelled() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// cancel stops every subtask (idempotent); wait blocks until they stopped.
func (e *execution) cancel() { e.cancelOnce.Do(func() { close(e.done) }) }

func (e *execution) wait() { e.wg.Wait() }

// report sends a message to the job loop unless the attempt is canceled.
func (e *execution) report(m any) {
	select {
	case e.events <- m:
	case <-e.done:
	}
}

func (e *execution) taskDone(t *subtask, err error) {
	defer e.wg.Done()
	if errors.Is(err, ErrCanceled) && e.cancelled() {
		return
	}
	e.report(taskDoneMsg{task: t.id, err: err})
}

func (e *execution) decline(t *subtask, id int64, err error) {
	e.report(declineMsg{id: id, task: t.id, err: err})
}

// writeState writes a subtask's snapshot in the background, then
// acknowledges it (or declines the checkpoint when writing failed). A
// stateless subtask (data nil) writes nothing: its handle has no file.
func (e *execution) writeState(t *subtask, b Barrier, h checkpoint.Handle, data *state.Encoded, db *dbCapture) {
	if !e.beginWrite(b.ID) {
		if db != nil {
			_ = t.incr.fs.RemoveAll(db.dir)
		}
		return // the checkpoint was aborted: nothing to write or acknowledge
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer e.endWrite(b.ID)
		fsys := b.FS
		if fsys == nil {
			fsys = e.env().FS
		}
		if db != nil {
			files, _, err := t.incr.upload(fsys, b.Dir, t.v.Op.UID, t.index, db)
			if err != nil {
				e.report(declineMsg{id: b.ID, task: t.id, err: fmt.Errorf("write the pebble state of %s: %w", t.name(), err)})
				return
			}
			h.DB = files
		}
		if b.Dir != "" && data != nil {
			name := checkpoint.StateFileName(t.v.Op.UID, t.index)
			err := e.env().Fire("checkpoint.write-state", t.v.Op.UID, t.index, b.ID)
			if err == nil {
				err = checkpoint.WriteState(fsys, b.Dir, name, data)
			}
			if err != nil {
				e.report(declineMsg{id: b.ID, task: t.id, err: fmt.Errorf("write state of %s: %w", t.name(), err)})
				return
			}
			h.File, h.Size, h.Checksum = name, data.Size, data.Checksum
		}
		e.report(ackMsg{id: b.ID, h: h})
	}()
}

// inflight counts a checkpoint's state writes in progress.
type inflight struct {
	n       int
	aborted bool
}

func (e *execution) inflightOf(id int64) *inflight {
	if e.writes == nil {
		e.writes = map[int64]*inflight{}
		e.writesCond = sync.NewCond(&e.writesMu)
	}
	w := e.writes[id]
	if w == nil {
		w = &inflight{}
		e.writes[id] = w
	}
	return w
}

// beginWrite registers a state write of checkpoint id; false when the
// checkpoint was aborted meanwhile.
func (e *execution) beginWrite(id int64) bool {
	e.writesMu.Lock()
	defer e.writesMu.Unlock()
	w := e.inflightOf(id)
	if w.aborted {
		return false
	}
	w.n++
	return true
}

func (e *execution) endWrite(id int64) {
	e.writesMu.Lock()
	defer e.writesMu.Unlock()
	if w := e.writes[id]; w != nil { // nil: completed (acked) and forgotten already
		w.n--
		e.writesCond.Broadcast()
	}
}

// abortWrites refuses further writes of checkpoint id and waits for those
// in progress, so its directory can be removed without racing them.
func (e *execution) abortWrites(id int64) {
	e.writesMu.Lock()
	defer e.writesMu.Unlock()
	w := e.inflightOf(id)
	w.aborted = true
	for w.n > 0 {
		e.writesCond.Wait()
	}
}

// forgetWrites drops the bookkeeping of a completed checkpoint.
func (e *execution) forgetWrites(id int64) {
	e.writesMu.Lock()
	defer e.writesMu.Unlock()
	delete(e.writes, id)
}

// trigger asks every source subtask to inject a barrier.
func (e *execution) trigger(b Barrier, drain bool) {
	for _, t := range e.sources {
		t.gate.PushControl(Control{Kind: CtrlTrigger, Barrier: b, Drain: drain})
		t.signalWake()
	}
}

// notify delivers a checkpoint outcome to every subtask, readers before
// writers: a reader must see the outcome of a terminal checkpoint before
// the end of partition its writer sends after seeing it.
func (e *execution) notify(kind ControlKind, id int64) {
	for i := len(e.tasks) - 1; i >= 0; i-- {
		t := e.tasks[i]
		if t.head != nil {
			continue // its head tells it (notifyChain)
		}
		t.gate.PushControl(Control{Kind: kind, ID: id})
		t.signalWake()
	}
}

// removing is a pebble store whose Close deletes its files: a subtask
// attempt's DB is working memory, rebuilt from the checkpoint by the next
// attempt (docs/state-backends.md).
type removing struct{ *pebblestate.Store }

func (r removing) Close() error { return r.Store.Remove() }
