package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/ha"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// entry is a job known to the daemon: running here (job != nil) or only
// in the registry (finished before this daemon started).
type entry struct {
	mu  sync.Mutex // guards rec and out
	rec Record
	job *engine.Job
	out *jobOut // the job's .out file (print sink); kept once closed, for reading
	// released: in HA mode, this daemon lost the job (Daemon.Release);
	// its local copy writes no record any more.
	released bool
	// dropped: the job store dropped the ended job (jobstore.max-capacity);
	// nothing of it is written any more.
	dropped bool
	// storage counts the job's object storage requests in this daemon.
	storage vfs.Meter
	// live is what the daemon samples of the running job (live.go).
	live jobLive
}

func (e *entry) closeOut() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.out != nil {
		_ = e.out.Close()
	}
}

// info returns the live info, or the last recorded one.
func (e *entry) info() api.JobInfo {
	if e.job != nil {
		info := e.job.Info()
		info.Storage = engine.StorageCostOf(e.storage.Stats())
		return info
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rec.Info
}

func newJobID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (d *Daemon) defaults() engine.Defaults {
	return engine.Defaults{Checkpointing: &d.cfg.Checkpointing, Restart: &d.cfg.Restart, StateBackend: d.cfg.StateBackend, Incremental: d.cfg.StateIncremental}
}

// Submit validates a job, plans its restore, checks its output
// directories, and starts it. A request with the RequestID of an earlier
// one answers with the job that one created.
func (d *Daemon) Submit(req api.SubmitRequest) (*api.SubmitResponse, error) {
	if err := checkRequestID(req.RequestID); err != nil {
		return nil, err
	}
	if resp, err, ok := d.resubmitted(req); ok {
		return resp, err
	}
	file := req.File
	if file == "" {
		file = "job.yaml"
	}
	g, err := engine.Compile(d.types, file, []byte(req.Spec), d.defaults())
	if err != nil {
		return nil, api.Invalid(err)
	}
	var restore *engine.Restore
	resp := &api.SubmitResponse{}
	if req.SavepointPath != "" {
		path, err := d.checkPath(req.SavepointPath)
		if err != nil {
			return nil, err
		}
		restore, err = engine.LoadRestore(d.fs, path)
		if err != nil {
			code := api.CodeInvalid
			if errors.Is(err, fs.ErrNotExist) {
				code = api.CodeNotFound
			}
			return nil, api.Errorf(code, "cannot restore from %s: %v", req.SavepointPath, err)
		}
		plan := engine.PlanRestore(g, restore, engine.RestoreOptions{AllowNonRestored: req.AllowNonRestoredState, AllowDrained: req.AllowDrained})
		resp.Plan = plan
		if err := plan.Err(); err != nil {
			if req.DryRun {
				return resp, err
			}
			return nil, err
		}
		for _, n := range plan.Notes {
			d.log.Warn().Str("savepoint", req.SavepointPath).Msg(n)
		}
		for _, dr := range plan.Dropped {
			d.log.Warn().Str("uid", dr.UID).Int64("bytes", dr.Bytes).Msg("dropping state of an operator the job does not have (allow-non-restored-state)")
		}
	}
	e, dup, err := d.create(req, g, restore)
	switch {
	case dup != nil:
		return dup, err
	case err != nil && req.DryRun:
		return resp, err
	case err != nil:
		return nil, err
	case e == nil: // a dry run
		return resp, nil
	}
	resp.ID = e.rec.ID
	resp.State = waitStarted(e.job, 30*time.Second)
	return resp, nil
}

// create checks the job's output directories and starts it, unless the
// request is a retry (dup: the answer) or a dry run (nil entry). Nothing
// else is submitted meanwhile: the output check and the request id hold
// until the job is in d.jobs.
func (d *Daemon) create(req api.SubmitRequest, g *engine.Graph, restore *engine.Restore) (_ *entry, dup *api.SubmitResponse, _ error) {
	d.submitMu.Lock()
	defer d.submitMu.Unlock()
	if resp, err, ok := d.resubmitted(req); ok {
		return nil, resp, err
	}
	if err := d.checkOutputs(g, restore, req.AllowNonEmptyOutput); err != nil || req.DryRun {
		return nil, nil, err
	}
	id := newJobID()
	e := &entry{rec: Record{ID: id, Name: g.Spec.Name, File: req.File, Spec: req.Spec, State: api.StateCreated,
		SubmitTime: time.Now(), SavepointPath: req.SavepointPath, AllowNonRestoredState: req.AllowNonRestoredState,
		AllowNonEmptyOutput: req.AllowNonEmptyOutput, RequestID: req.RequestID}}
	if restore != nil {
		p := engine.PointOf(restore)
		e.rec.Recovery.Initial = pointRecord(&p)
	}
	if err := d.reg.save(&e.rec); err != nil {
		return nil, nil, fmt.Errorf("save job %s in the registry: %w", id, err)
	}
	d.start(e, g, restore, engine.JobOptions{})
	return e, nil, nil
}

// checkRequestID refuses request ids that are not short plain tokens.
func checkRequestID(id string) error {
	if len(id) > 128 {
		return api.Errorf(api.CodeUsage, "request id is longer than 128 characters")
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return api.Errorf(api.CodeUsage, "request id %q may only hold letters, digits, '-', '_' and '.'", id)
		}
	}
	return nil
}

// resubmitted answers a request whose id an earlier submission used: with
// the job it created (ok), or a conflict when it asked for another job.
func (d *Daemon) resubmitted(req api.SubmitRequest) (*api.SubmitResponse, error, bool) {
	if req.RequestID == "" {
		return nil, nil, false
	}
	d.mu.Lock()
	var e *entry
	for _, x := range d.jobs {
		if x.rec.RequestID == req.RequestID {
			e = x
		}
	}
	d.mu.Unlock()
	if e == nil {
		return nil, nil, false
	}
	if e.rec.Spec != req.Spec || e.rec.SavepointPath != req.SavepointPath {
		return nil, api.Errorf(api.CodeConflict, "request id %s was used for another submission (job %s): send a new id for a new job", req.RequestID, e.rec.ID), true
	}
	d.log.Info().Str("job", e.rec.ID).Str("request_id", req.RequestID).Msg("submission retried: answering with the job it created")
	resp := &api.SubmitResponse{ID: e.rec.ID, State: e.info().State}
	if req.DryRun {
		resp = &api.SubmitResponse{}
	}
	return resp, nil, true
}

// start runs a job for e, wiring persistence and output.
func (d *Daemon) start(e *entry, g *engine.Graph, restore *engine.Restore, o engine.JobOptions) {
	out, err := openJobOut(filepath.Join(d.reg.jobDir(e.rec.ID), "job.out"), d.cfg.JobOutMaxSize)
	if err != nil {
		d.log.Warn().Err(err).Msg("cannot open the job's .out file; print output goes to stdout only")
		out = nil
	}
	e.mu.Lock()
	e.out = out
	e.mu.Unlock()
	o.ID, o.Graph, o.Restore = e.rec.ID, g, restore
	o.Env = &engine.Env{FS: d.jobFS(e), Stdout: d.stdout, Faults: d.faults, AllowNonEmptyOutput: e.rec.AllowNonEmptyOutput,
		JobEnded: d.jobEnded, PebbleFS: d.fs, PebbleDir: d.cfg.PebbleLocalDir}
	if e.out != nil {
		o.Env.OutFile = e.out
	}
	o.Log = d.log
	o.CheckpointsDir, o.SavepointsDir = d.cfg.CheckpointsDir, d.cfg.SavepointsDir
	if o.SubmitTime.IsZero() {
		o.SubmitTime = e.rec.SubmitTime
	}
	o.OnUpdate = func(j *engine.Job) { d.persist(e, j) }
	o.OnRecord = func(j *engine.Job, r engine.Recovery) error { return d.record(e, j, r) }
	d.mu.Lock()
	d.jobs[e.rec.ID] = e
	e.job = engine.StartJob(o)
	d.mu.Unlock()
	d.watchers.Add(1)
	go func() {
		defer d.watchers.Done()
		<-e.job.Done()
		d.persist(e, e.job)
		e.closeOut()
		d.ended(e)
		d.trimEnded()
	}()
}

// persist records a job's latest state in the registry. A failure is
// logged: the recovery facts it writes are those already recorded (record
// is the write commits wait for).
func (d *Daemon) persist(e *entry, j *engine.Job) {
	info, rec := recorded(j.Info()), j.Recovery()
	e.live.observeState(&info, time.Now())
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released || e.dropped {
		return
	}
	e.rec.State = info.State
	e.rec.Info = info
	e.rec.Recovery = recoveryRecord(rec)
	if err := d.reg.save(&e.rec); err != nil {
		d.log.Error().Err(err).Str("job", e.rec.ID).Msg("could not save the job registry")
	}
	if !info.State.Active() {
		d.saveJournalLocked(e)
	}
}

// saveJournalLocked writes what a daemon restart keeps of e's events and
// exceptions (journal.go); e.mu is held, which orders the writes. A failed
// write is logged: the journal is for display, and nothing depends on it.
func (d *Daemon) saveJournalLocked(e *entry) {
	if e.released || e.dropped {
		return
	}
	if err := d.reg.saveJournal(e.rec.ID, e.live.journal()); err != nil {
		d.log.Warn().Err(err).Str("job", e.rec.ID).Msg("could not save the job's events; a daemon restart will not show them")
	}
}

// saveHistoryLocked writes the charts of e's job, which ended, for its page
// after a restart (historyfile.go); e.mu is held, so a job the store
// dropped gets no directory back. A failed write is logged.
func (d *Daemon) saveHistoryLocked(e *entry) {
	if e.released || e.dropped {
		return
	}
	s, ok := e.live.savedHistory()
	if !ok {
		return
	}
	if err := d.reg.saveHistory(e.rec.ID, s); err != nil {
		d.log.Warn().Err(err).Str("job", e.rec.ID).Msg("could not save the job's charts; a daemon restart will not show them")
	}
}

// record writes a job's new restore point into the registry, durably,
// before the snapshot commits (JobOptions.OnRecord); an error fails the
// snapshot and leaves the entry as it was.
func (d *Daemon) record(e *entry, j *engine.Job, r engine.Recovery) error {
	info := recorded(j.Info())
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.released {
		return ha.ErrNotOwner
	}
	next := e.rec
	next.State, next.Info, next.Recovery = info.State, info, recoveryRecord(r)
	if err := d.reg.save(&next); err != nil {
		return fmt.Errorf("save the job registry: %w", err)
	}
	// Only what changed: lookups read the fixed fields without e.mu.
	e.rec.Version, e.rec.UpdateTime = next.Version, next.UpdateTime
	e.rec.State, e.rec.Info, e.rec.Recovery = next.State, next.Info, next.Recovery
	return nil
}

// waitStarted waits until the job is RUNNING with every operator opened
// (engine.Job.Started), or its first attempt failed (FAILED: a
// configuration error no restart can cure; RESTARTING), or ended, or the
// timeout passed, and returns its state then.
func waitStarted(j *engine.Job, timeout time.Duration) api.JobState {
	deadline := time.Now().Add(timeout)
	for {
		s := j.State()
		switch {
		case s == api.StateRunning && j.Started(), time.Now().After(deadline):
			return s
		case s != api.StateCreated && s != api.StateRunning && s != api.StateFailing:
			return s
		}
		select {
		case <-j.Done():
			return j.State()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// entries returns the jobs the daemon knows, in no order, for reading
// without holding d.mu.
func (d *Daemon) entries() []*entry {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*entry, 0, len(d.jobs))
	for _, e := range d.jobs {
		out = append(out, e)
	}
	return out
}

// lookup finds a job that runs (or ran) here by id, unique id prefix or
// name (resolve); a ref that names another daemon's job is not found here
// (Info shows it from the cluster's record).
func (d *Daemon) lookup(ref string) (*entry, error) {
	e, id, err := d.resolve(ref)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, api.Errorf(api.CodeNotFound, "job %s did not run on this daemon but on another of the cluster: its logs, events and checkpoints are that daemon's (flinkgo info %s shows its record from any daemon)", id, id)
	}
	return e, nil
}

// resolve finds a job by id, unique id prefix or name (api.FindJob): this
// daemon's entry, or nil and the id of another daemon's job. In HA mode
// the candidates are the whole cluster's jobs, as the forwarder's are: a
// name two daemons' jobs share is ambiguous on either daemon, never
// silently this daemon's one. This daemon's jobs count with their live
// state, the others' with their records in etcd.
func (d *Daemon) resolve(ref string) (*entry, string, error) {
	d.mu.Lock()
	e, ok := d.jobs[ref]
	d.mu.Unlock()
	if ok {
		return e, ref, nil
	}
	entries := d.entries()
	refs := make([]api.JobRef, len(entries))
	byID := make(map[string]*entry, len(entries))
	for i, e := range entries {
		refs[i] = api.JobRef{ID: e.rec.ID, Name: e.rec.Name, State: e.state()}
		byID[e.rec.ID] = e
	}
	refs = append(refs, d.clusterRefs(byID)...)
	id, err := api.FindJob(ref, refs)
	if err != nil {
		return nil, "", err
	}
	return byID[id], id, nil
}

// state is the job's state, live or last recorded.
func (e *entry) state() api.JobState {
	if e.job != nil {
		return e.job.State()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rec.Info.State
}

// List returns jobs, newest first: active and recent ones, or all.
func (d *Daemon) List(all bool) []api.JobInfo {
	entries := d.entries()
	out := []api.JobInfo{} // [] in JSON, not null
	recent := time.Now().Add(-time.Hour)
	for _, e := range entries {
		info := e.info()
		if !all && !info.State.Active() && info.EndTime != nil && info.EndTime.Before(recent) {
			continue
		}
		info.Operators = nil
		out = append(out, d.withOwner(info))
	}
	out = append(out, d.clusterJobs(entries, all, recent)...)
	sort.Slice(out, func(i, j int) bool { return out[i].SubmitTime.After(out[j].SubmitTime) })
	return out
}

// Info returns one job's details.
func (d *Daemon) Info(ref string) (*api.JobInfo, error) {
	e, id, err := d.resolve(ref)
	if err != nil {
		return nil, err
	}
	if e == nil {
		if info, ok := d.clusterInfo(id); ok {
			return info, nil
		}
		return nil, api.Errorf(api.CodeNotFound, "job %s left the cluster's records (flinkgo list -a shows all jobs)", id)
	}
	info := d.withOwner(d.liveInfo(e))
	return &info, nil
}

// Checkpoints returns one job's checkpoint history.
func (d *Daemon) Checkpoints(ref string) (*api.CheckpointsInfo, error) {
	e, err := d.lookup(ref)
	if err != nil {
		return nil, err
	}
	cp := api.CheckpointsInfo{}
	if e.job != nil {
		cp = e.job.Checkpoints()
	}
	if cp.History == nil {
		cp.History = []api.CheckpointInfo{} // [] in JSON, not null
	}
	return &cp, nil
}

func (d *Daemon) running(ref string) (*entry, error) {
	e, err := d.lookup(ref)
	if err != nil {
		return nil, err
	}
	if e.job == nil || !e.job.State().Active() {
		return nil, api.Errorf(api.CodeConflict, "job %s is %s", e.rec.ID, e.info().State)
	}
	return e, nil
}

// Cancel cancels a job and says what a restore would reprocess.
func (d *Daemon) Cancel(ref string) (*api.CancelResponse, error) {
	e, err := d.running(ref)
	if err != nil {
		return nil, err
	}
	if err := e.job.Cancel(); err != nil {
		return nil, err
	}
	resp := &api.CancelResponse{State: e.job.State(), ResumeFrom: e.job.ResumeFrom()}
	if resp.ResumeFrom != "" {
		resp.RestoreCommand = api.RestoreCommand(resp.ResumeFrom, e.rec.File)
	}
	resp.Warning = cancelWarning(e.job.LatestCheckpoint(), e.job.LatestSavepoint(), resp.ResumeFrom, e.rec.File)
	return resp, nil
}

// cancelWarning tells how much a restore will reprocess, and from where,
// with the command that restores the job (its spec file is file).
func cancelWarning(cp, sp *api.CheckpointInfo, resume, file string) string {
	ago := func(c *api.CheckpointInfo) string { return time.Since(c.TriggerTime).Round(time.Second).String() }
	var parts []string
	switch {
	case resume != "" && cp != nil && cp.Path == resume:
		parts = append(parts, fmt.Sprintf("the retained checkpoint %d (%s ago, %s) is where a restore would resume: `%s` reprocesses everything after it", cp.ID, ago(cp), resume, api.RestoreCommand(resume, file)))
	case resume != "":
		parts = append(parts, fmt.Sprintf("a restore from %s (`%s`) reprocesses everything after it", resume, api.RestoreCommand(resume, file)))
	case cp != nil:
		parts = append(parts, "its checkpoints were deleted (delete-on-cancellation)")
	}
	if sp != nil {
		parts = append(parts, fmt.Sprintf("its latest savepoint %d (%s ago, %s) can be restored with `%s`, reprocessing everything after it", sp.ID, ago(sp), sp.Path, api.RestoreCommand(sp.Path, file)))
	}
	if len(parts) == 0 {
		parts = append(parts, "no checkpoint or savepoint is kept: a restart starts from the sources' starting positions")
	}
	parts = append(parts, "`flinkgo stop` takes a savepoint and commits atomically: the safe way to pause a job")
	return strings.Join(parts, "; ")
}

// Savepoint triggers a savepoint.
func (d *Daemon) Savepoint(ref string, req api.SavepointRequest) (*api.SavepointResponse, error) {
	e, err := d.running(ref)
	if err != nil {
		return nil, err
	}
	target, err := d.checkTarget(req.TargetDir)
	if err != nil {
		return nil, err
	}
	path, id, err := e.job.Savepoint(target)
	if err != nil {
		return nil, err
	}
	return &api.SavepointResponse{Path: path, ID: id, RestoreCommand: api.RestoreCommand(path, e.rec.File)}, nil
}

// Stop stops a job with a savepoint.
func (d *Daemon) Stop(ref string, req api.SavepointRequest) (*api.SavepointResponse, error) {
	e, err := d.running(ref)
	if err != nil {
		return nil, err
	}
	target, err := d.checkTarget(req.TargetDir)
	if err != nil {
		return nil, err
	}
	path, id, err := e.job.Stop(target, req.Drain)
	if err != nil {
		return nil, err
	}
	<-e.job.Done()
	if req.Drain {
		return &api.SavepointResponse{Path: path, ID: id, NoRestore: api.DrainedNoRestore}, nil
	}
	return &api.SavepointResponse{Path: path, ID: id, RestoreCommand: api.RestoreCommand(path, e.rec.File)}, nil
}

// checkTarget checks a savepoint target like checkPath; "" means
// state.savepoints.dir (by default $FLINKGO_HOME/savepoints).
func (d *Daemon) checkTarget(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	return d.checkPath(dir)
}

func (d *Daemon) configName() string {
	if d.cfg.File != "" {
		return d.cfg.File
	}
	return filepath.Join(d.cfg.Home, "flinkgo.yaml")
}

// checkPath refuses paths the API must not touch: relative paths (the
// daemon's working directory is not the user's), NUL bytes, ".." parts, and
// paths outside security.allowed-paths when it is set. It returns the path
// to use: with allowed paths, where p leads now (symlinks resolved), which
// the daemon's confined filesystem (vfs.Confined on the resolved roots)
// then reads and writes without following any link out of the root, so a
// link swapped in after this check cannot redirect it.
func (d *Daemon) checkPath(p string) (string, error) {
	if err := checkPathShape(p); err != nil {
		return "", err
	}
	if vfs.IsObject(p) {
		return d.checkObjectPath(vfs.Clean(p))
	}
	p = vfs.Clean(p) // a file:// URL names a local path
	if len(d.cfg.AllowedPaths) == 0 {
		return p, nil
	}
	real := resolve(p)
	for _, root := range allowedRoots(d.cfg.AllowedPaths) {
		if real == root || strings.HasPrefix(real, root+string(filepath.Separator)) {
			return real, nil
		}
	}
	return "", api.Errorf(api.CodeUsage, "path %q is outside security.allowed-paths (%s)", p, strings.Join(d.cfg.AllowedPaths, ", "))
}

// checkObjectPath applies security.allowed-paths to an object URL: with
// allowed paths set, it must lie below one of their s3:// entries.
func (d *Daemon) checkObjectPath(p string) (string, error) {
	if len(d.cfg.AllowedPaths) == 0 {
		return p, nil
	}
	for _, root := range d.cfg.AllowedPaths {
		if vfs.IsObject(root) && vfs.Within(p, root) {
			return p, nil
		}
	}
	return "", api.Errorf(api.CodeUsage, "path %q is outside security.allowed-paths (%s)", p, strings.Join(d.cfg.AllowedPaths, ", "))
}

// allowedRoots are the security.allowed-paths directories with their
// symlinks resolved (they come from the daemon's config and are trusted).
func allowedRoots(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !vfs.IsObject(p) {
			out = append(out, resolve(p))
		}
	}
	return out
}

// resolve follows the symlinks of the deepest existing ancestor of p and
// appends the rest (which does not exist yet, so cannot be a link).
func resolve(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
	}
}

func checkPathShape(p string) error {
	switch {
	case strings.ContainsRune(p, 0):
		return api.Errorf(api.CodeUsage, "path contains a NUL byte")
	case !vfs.IsAbs(p):
		return api.Errorf(api.CodeUsage, "path %q must be absolute (or an s3://bucket/prefix URL)", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return api.Errorf(api.CodeUsage, "path %q contains '..'", p)
		}
	}
	return nil
}
