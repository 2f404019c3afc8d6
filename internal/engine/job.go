package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// JobOptions configure a job.
type JobOptions struct {
	ID    string
	Graph *Graph
	Env   *Env
	Log   zerolog.Logger
	// CheckpointsDir is state.checkpoints.dir; the job's checkpoints go to
	// <CheckpointsDir>/<ID>/chk-<n>.
	CheckpointsDir string
	// SavepointsDir is state.savepoints.dir, the default savepoint target.
	SavepointsDir string
	// Restore is the snapshot the first attempt starts from (run -s, or
	// the one ChooseRestore picked for a recovered job); nil for a fresh
	// start.
	Restore *Restore
	// Recovery carries over a recovered job's recorded facts (its
	// recorded restore point, which Restore may be older than, retained
	// checkpoints, numbering, restarts); nil for a new job, whose restore
	// point and initial savepoint are Restore.
	Recovery *Recovery
	// SubmitTime carries over a recovered job's submission time.
	SubmitTime time.Time
	// OnUpdate is called on the job's goroutine after every state change
	// (the daemon persists its registry here). It must not call back into
	// the job.
	OnUpdate func(*Job)
	// OnRecord is called on the job's goroutine when a snapshot that
	// commits (a checkpoint, a final checkpoint, a stop-with-savepoint) is
	// durable, before anything commits: it must record rec durably (the
	// daemon's registry) and return nil, or return the error, which fails
	// that snapshot (an I/O failure, counted against tolerableFailures)
	// and commits nothing. It must not call back into the job but Info
	// and Recovery.
	OnRecord func(j *Job, rec Recovery) error
}

// Job runs a graph: one attempt at a time, with checkpoints, restarts,
// savepoints, stop and cancel. All decisions happen on one goroutine (the
// job loop); the methods below send it requests.
type Job struct {
	id    string
	graph *Graph
	env   *Env
	log   zerolog.Logger
	opts  JobOptions

	requests chan request
	done     chan struct{}
	wg       sync.WaitGroup // background I/O started by the loop

	mu     sync.Mutex // guards the fields below (read by Info)
	status jobStatus
}

type jobStatus struct {
	state        api.JobState
	err          string
	errTime      time.Time
	streak       failureStreak
	submitTime   time.Time
	endTime      time.Time
	restarts     int
	restoredFrom *api.RestoredInfo
	history      []api.CheckpointInfo
	counts       api.CheckpointCounts
	latest       *api.CheckpointInfo // latest completed periodic checkpoint
	latestSP     *api.CheckpointInfo
	restorePoint *checkpoint.Point // the newest recorded snapshot that commits
	initial      *checkpoint.Point // the savepoint the job was submitted with
	legacy       bool              // restorePoint came from an old record (Recovery.Legacy)
	latestFailed *api.CheckpointInfo
	exec         *execution
	baseIn       []int64 // records of finished attempts, by vertex
	baseOut      []int64
	baseGauges   []map[string]int64
	lastFigures  *figures // of the last attempt, for its watermarks once it ended
	nextID       int64
	retained     []int64 // completed periodic checkpoints on disk, oldest first
	// uncertain are checkpoints whose record write failed with an outcome
	// that may still be applied (checkpoint.Abort.Keep): the durable
	// record may name one although restorePoint does not. The job loop's
	// restart keeps their directories; the next successful record settles
	// them (it names a newer point, so nothing names these any more).
	uncertain  []int64
	resumeFrom string  // latest retained checkpoint or the savepoint started from
	durations  []int64 // completed checkpoint durations (ms), for the summary
	sizes      []int64
}

type requestKind int

const (
	reqCancel requestKind = iota + 1
	reqSavepoint
	reqStop
	reqSuspend
)

type request struct {
	kind  requestKind
	dir   string
	drain bool
	// suspend (with reqStop): the stopped job ends SUSPENDED, to be resumed
	// from its savepoint, instead of FINISHED (daemon shutdown).
	suspend bool
	reply   chan reply
}

type reply struct {
	path string
	id   int64
	err  error
}

// StartJob starts the job loop and returns at once.
func StartJob(o JobOptions) *Job {
	j := &Job{id: o.ID, graph: o.Graph, env: o.Env, opts: o,
		log:      o.Log.With().Str("job", o.ID).Logger(),
		requests: make(chan request), done: make(chan struct{})}
	if j.env == nil {
		j.env = &Env{}
	}
	j.status.state = api.StateCreated
	j.status.submitTime = o.SubmitTime
	if j.status.submitTime.IsZero() {
		j.status.submitTime = time.Now()
	}
	n := len(o.Graph.Vertices)
	j.status.baseIn, j.status.baseOut, j.status.baseGauges = make([]int64, n), make([]int64, n), make([]map[string]int64, n)
	if rec := o.Recovery; rec != nil {
		j.status.restorePoint, j.status.initial, j.status.legacy = rec.RestorePoint, rec.Initial, rec.Legacy
		j.status.retained, j.status.nextID, j.status.restarts = append([]int64(nil), rec.Retained...), rec.NextID, rec.Restarts
	}
	if o.Restore != nil {
		if j.status.nextID <= o.Restore.Meta.CheckpointID {
			j.status.nextID = o.Restore.Meta.CheckpointID + 1
		}
		j.status.resumeFrom = o.Restore.Dir
		if o.Recovery == nil {
			// Until a checkpoint completes, recovery resumes where this
			// job started.
			p := PointOf(o.Restore)
			j.status.restorePoint, j.status.initial = &p, &p
		}
	}
	go j.loop()
	return j
}

// ID is the job id.
func (j *Job) ID() string { return j.id }

// Graph is the job's graph.
func (j *Job) Graph() *Graph { return j.graph }

// Done is closed when the job reached a terminal state (or was suspended).
func (j *Job) Done() <-chan struct{} { return j.done }

// State returns the current state.
func (j *Job) State() api.JobState {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status.state
}

// ResumeFrom is the snapshot a restore of this job would use: its latest
// retained checkpoint, or the savepoint it started from ("" when none).
func (j *Job) ResumeFrom() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status.resumeFrom
}

// LatestCheckpoint returns the latest completed periodic checkpoint, or nil.
func (j *Job) LatestCheckpoint() *api.CheckpointInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.status.latest == nil {
		return nil
	}
	c := *j.status.latest
	return &c
}

// LatestSavepoint returns the latest savepoint taken by this job, or nil.
func (j *Job) LatestSavepoint() *api.CheckpointInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.status.latestSP == nil {
		return nil
	}
	c := *j.status.latestSP
	return &c
}

// errNotRunning is answered to requests once the loop has ended.
func (j *Job) errNotRunning() error {
	return api.Errorf(api.CodeConflict, "job %s is %s", j.id, j.State())
}

func (j *Job) send(r request) (reply, error) {
	r.reply = make(chan reply, 1)
	select {
	case j.requests <- r:
	case <-j.done:
		return reply{}, j.errNotRunning()
	}
	select {
	case rep := <-r.reply:
		return rep, rep.err
	case <-j.done:
		// The loop may answer just before it ends.
		select {
		case rep := <-r.reply:
			return rep, rep.err
		default:
			return reply{}, j.errNotRunning()
		}
	}
}

// Cancel stops the job at once (hard stop); it returns when the job is
// CANCELED. Checkpoints are kept or deleted per the externalized setting.
func (j *Job) Cancel() error {
	_, err := j.send(request{kind: reqCancel})
	return err
}

// Savepoint takes a savepoint into dir (or the default) and returns its
// path; the job keeps running.
func (j *Job) Savepoint(dir string) (string, int64, error) {
	rep, err := j.send(request{kind: reqSavepoint, dir: dir})
	return rep.path, rep.id, err
}

// Stop takes a final savepoint, commits, and finishes the job (soft stop).
func (j *Job) Stop(dir string, drain bool) (string, int64, error) {
	rep, err := j.send(request{kind: reqStop, dir: dir, drain: drain})
	return rep.path, rep.id, err
}

// Suspend stops the job's tasks because the daemon is shutting down; the
// job stays resumable from its checkpoints (state SUSPENDED).
func (j *Job) Suspend() error {
	_, err := j.send(request{kind: reqSuspend})
	return err
}

// SuspendWithSavepoint stops the job with a savepoint into dir, as Stop
// does, but leaves it SUSPENDED: the daemon resumes it from that savepoint
// when it starts again.
func (j *Job) SuspendWithSavepoint(dir string) (string, int64, error) {
	rep, err := j.send(request{kind: reqStop, dir: dir, suspend: true})
	return rep.path, rep.id, err
}

func (j *Job) setState(s api.JobState) {
	j.mu.Lock()
	from := j.status.state
	if from == s {
		j.mu.Unlock()
		return
	}
	if !api.CanTransition(from, s) {
		j.mu.Unlock()
		panic(fmt.Sprintf("runtime: illegal job state transition %s -> %s (bug)", from, s))
	}
	j.status.state = s
	if s.Terminal() || s == api.StateSuspended {
		j.status.endTime = time.Now()
	}
	j.mu.Unlock()
	j.log.Info().Str("from", string(from)).Str("to", string(s)).Msg("job state changed")
	j.update()
}

func (j *Job) update() {
	if j.opts.OnUpdate != nil {
		j.opts.OnUpdate(j)
	}
}

func (j *Job) setError(err error) {
	j.mu.Lock()
	j.status.err = err.Error()
	j.status.errTime = time.Now()
	j.status.streak.failed(err, j.status.errTime)
	j.mu.Unlock()
}
