package jobchaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/flinkgo/flinkgo/internal/dev/consume"
	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/topics"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// Options configure Run.
type Options struct {
	// Exe is the flinkgo binary the daemons run (the running one).
	Exe string
	// Kills is how many times the daemon dies (SIGKILL at a random moment
	// or an exit at a fault point); StopRestores how many stop → run -s
	// cycles the job goes through.
	Kills, StopRestores int
	// Window is how long after the job's (re)start a fault at a random
	// moment may land (0: the undisturbed run's job time divided by the
	// number of faults).
	Window time.Duration
	// Seed picks the schedule: the kinds of the faults, their points and
	// hits, and the moments as fractions of Window.
	Seed uint64
	// WorkDir holds the runs' homes and outputs ("": a temporary
	// directory, removed at the end unless Keep).
	WorkDir string
	Keep    bool
	// Progress, when set, is told what happens as it happens.
	Progress io.Writer
}

// Fault kinds.
const (
	FaultKill        = "kill"         // SIGKILL of the daemon at a random moment
	FaultExit        = "exit"         // the daemon exits (code 137) at a fault point, as kill -9 there
	FaultStopRestore = "stop-restore" // stop with a savepoint, then run -s
)

// Fault is one planned fault of the disturbed run and what became of it.
type Fault struct {
	Kind string `json:"kind"`
	// Point and Hit: an exit fires at the Hit-th pass of Point after the
	// daemon's start.
	Point string `json:"point,omitempty"`
	Hit   int    `json:"hit,omitempty"`
	// AfterMs: a kill or a stop lands this long after the job is running
	// again.
	AfterMs float64 `json:"afterMs,omitempty"`
	Fired   bool    `json:"fired"`
	// AtMs is when it fired, since the disturbed run started.
	AtMs float64 `json:"atMs,omitempty"`
	Note string  `json:"note,omitempty"`
	frac float64
}

// RunInfo is one run of the job.
type RunInfo struct {
	// WallMs runs from the daemon's first start to the job's end; JobMs
	// from the submission.
	WallMs float64 `json:"wallMs"`
	JobMs  float64 `json:"jobMs"`
	State  string  `json:"state"`
	Error  string  `json:"error,omitempty"`
	Jobs   int     `json:"jobs"` // submissions: 1 + the run -s of each stop-restore
	Dir    string  `json:"dir,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Spec             string            `json:"spec"`
	Seed             uint64            `json:"seed"`
	Kills            int               `json:"kills"`
	StopRestores     int               `json:"stopRestores"`
	WindowMs         float64           `json:"windowMs"`
	Undisturbed      RunInfo           `json:"undisturbed"`
	Disturbed        RunInfo           `json:"disturbed"`
	Faults           []Fault           `json:"faults"`
	Injected         int               `json:"injected"`
	Fired            int               `json:"fired"`
	Sinks            []SinkReport      `json:"sinks"`
	NotCompared      map[string]string `json:"notCompared,omitempty"`
	Nondeterministic []Finding         `json:"nondeterministic,omitempty"`
	Unchecked        []string          `json:"unchecked,omitempty"`
	// Compared, Lost, Duplicated, Unexpected, Changed sum the sinks'.
	Compared   int  `json:"compared"`
	Lost       int  `json:"lost"`
	Duplicated int  `json:"duplicated"`
	Unexpected int  `json:"unexpected"`
	Changed    int  `json:"changed"`
	Identical  bool `json:"identical"`
	// Ratio is the disturbed run's wall time over the undisturbed one's.
	Ratio   float64 `json:"ratio"`
	WorkDir string  `json:"workDir,omitempty"`
}

// Run runs the job undisturbed, then disturbed, and compares the outputs.
// An error means the comparison could not be made (a daemon that would not
// start, a job that failed in the undisturbed run, an unreadable output).
func Run(ctx context.Context, j *Job, o Options) (*Report, error) {
	rep := &Report{Spec: j.File, Seed: o.Seed, Kills: o.Kills, StopRestores: o.StopRestores, NotCompared: j.Ignored,
		Nondeterministic: j.Nondeterministic, Unchecked: j.Unchecked}
	if len(rep.NotCompared) == 0 {
		rep.NotCompared = nil
	}
	work := o.WorkDir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "flinkgo-chaos-"); err != nil {
			return nil, err
		}
		if !o.Keep {
			defer os.RemoveAll(work)
		}
	}
	if o.Keep {
		rep.WorkDir = work
	}
	nonce := randomHex(4)
	r := &runner{j: j, o: o, work: work, nonce: nonce, rep: rep}
	if !o.Keep {
		defer r.deleteTopics()
	}
	rep.Faults = r.plan()
	rep.Injected = len(rep.Faults)

	before, err := r.inputEnds(ctx)
	if err != nil {
		return nil, err
	}
	base, err := r.prepare(ctx, "undisturbed")
	if err != nil {
		return nil, err
	}
	r.say("undisturbed run...")
	if err := r.undisturbed(ctx, base); err != nil {
		return nil, err
	}
	r.say("undisturbed run: %s, job %s", ms(rep.Undisturbed.WallMs), rep.Undisturbed.State)
	window := o.Window
	if window <= 0 {
		// Spread over the job: N moments drawn in [0, T/N) add up to about
		// T/2, so most land while the job still runs, restarts included.
		window = max(time.Duration(rep.Undisturbed.JobMs*float64(time.Millisecond))/time.Duration(max(len(rep.Faults), 1)), 20*time.Millisecond)
	}
	rep.WindowMs = float64(window.Microseconds()) / 1000
	r.window = window
	for i := range rep.Faults {
		if rep.Faults[i].Kind != FaultExit {
			rep.Faults[i].AfterMs = float64((time.Duration(rep.Faults[i].frac * float64(window))).Microseconds()) / 1000
		}
	}
	dist, err := r.prepare(ctx, "disturbed")
	if err != nil {
		return nil, err
	}
	r.say("disturbed run: %d faults...", len(rep.Faults))
	if err := r.disturbed(ctx, dist); err != nil {
		return nil, err
	}
	for _, f := range rep.Faults {
		if f.Fired {
			rep.Fired++
		}
	}
	// Both runs read each Kafka topic to its end at their start: a topic
	// written meanwhile gave them different input, and no comparison holds.
	after, err := r.inputEnds(ctx)
	if err != nil {
		return nil, err
	}
	for t, ends := range before {
		for p, end := range ends {
			if after[t][p] != end {
				return nil, fmt.Errorf("input topic %s grew while chaos ran (partition %d: end offset %d, then %d): the two runs read different records; run chaos when nothing writes the topics the job reads", t, p, end, after[t][p])
			}
		}
	}
	if rep.Undisturbed.WallMs > 0 {
		rep.Ratio = rep.Disturbed.WallMs / rep.Undisturbed.WallMs
	}
	if err := r.compare(ctx, base, dist); err != nil {
		return nil, err
	}
	return rep, nil
}

type runner struct {
	j     *Job
	o     Options
	work  string
	nonce string
	rep   *Report
	start time.Time // the disturbed run's
	// window is how long after a (re)start a fault may land.
	window time.Duration
	// created are the output topics the runs created, with their brokers.
	created []createdTopic
}

type createdTopic struct {
	brokers []string
	name    string
}

// deleteTopics deletes the runs' output topics (best effort: a broker
// gone by now keeps them, and the report names them).
func (r *runner) deleteTopics() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, t := range r.created {
		_ = topics.Delete(ctx, t.brokers, []string{t.name})
	}
}

// place is one run's private home, spec and outputs.
type place struct {
	name    string
	dir     string
	spec    string
	src     []byte
	outputs map[string]Output
	daemon  *child
	info    *RunInfo
}

func (r *runner) say(format string, args ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, format+"\n", args...)
	}
}

// inputEnds lists the end offsets of every topic a Kafka source reads.
func (r *runner) inputEnds(ctx context.Context) (map[string]map[int32]int64, error) {
	out := map[string]map[int32]int64{}
	for _, s := range r.j.Source {
		for _, t := range s.Topics {
			ends, err := consume.EndOffsets(ctx, s.Brokers, t, false)
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", s.UID, err)
			}
			out[t] = ends
		}
	}
	return out, nil
}

// prepare writes a run's spec and creates its Kafka output topics.
func (r *runner) prepare(ctx context.Context, name string) (*place, error) {
	dir := filepath.Join(r.work, name)
	p := &place{name: name, dir: dir, spec: filepath.Join(dir, filepath.Base(r.j.File))}
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o700); err != nil {
		return nil, err
	}
	var err error
	if p.src, p.outputs, err = r.j.Rewrite(name, filepath.Join(dir, "out"), r.nonce); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.spec, p.src, 0o600); err != nil {
		return nil, err
	}
	for _, s := range r.j.Sinks {
		if s.Type != "kafka" {
			continue
		}
		parts := 1
		if list, err := topics.List(ctx, s.Brokers); err == nil {
			for _, t := range list {
				if t.Name == s.Topic {
					parts = t.Partitions
				}
			}
		}
		if err := topics.Create(ctx, s.Brokers, []kafkabroker.Topic{{Name: p.outputs[s.UID].Topic, Partitions: parts}}); err != nil {
			return nil, fmt.Errorf("sink %s: create the run's private output topic: %w", s.UID, err)
		}
		r.created = append(r.created, createdTopic{brokers: s.Brokers, name: p.outputs[s.UID].Topic})
	}
	if p.daemon, err = newChild(r.o.Exe, filepath.Join(dir, "home")); err != nil {
		return nil, err
	}
	if name == "undisturbed" {
		p.info = &r.rep.Undisturbed
	} else {
		p.info = &r.rep.Disturbed
	}
	if r.o.Keep {
		p.info.Dir = dir
	}
	return p, nil
}

// plan draws the schedule from the seed: each kill is an exit at a fault
// point the job passes (half of them, when the job has such points) or a
// SIGKILL at a random moment; the stop-restores are placed among them.
func (r *runner) plan() []Fault {
	rng := mrand.New(mrand.NewPCG(r.o.Seed, r.o.Seed^0x9e3779b97f4a7c15))
	points := r.j.points()
	var out []Fault
	for range r.o.Kills {
		f := Fault{Kind: FaultKill, frac: rng.Float64()}
		if len(points) > 0 && rng.IntN(2) == 0 {
			f = Fault{Kind: FaultExit, Point: points[rng.IntN(len(points))], Hit: 1 + rng.IntN(3)}
		}
		out = append(out, f)
	}
	for range r.o.StopRestores {
		f := Fault{Kind: FaultStopRestore, frac: rng.Float64()}
		i := rng.IntN(len(out) + 1)
		out = append(out[:i], append([]Fault{f}, out[i:]...)...)
	}
	return out
}

// points are the fault points the job passes while it runs, where an exit
// is a crash at a precise place of the checkpoint and commit protocol.
func (j *Job) points() []string {
	pts := []string{"task.open"}
	if j.Checkpointing {
		pts = append(pts, "task.snapshot", "task.notify-complete", "checkpoint.write-state",
			"checkpoint.publish-metadata", "checkpoint.record", "checkpoint.metadata-published")
	}
	seen := map[string]bool{}
	add := func(ps ...string) {
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				pts = append(pts, p)
			}
		}
	}
	for _, s := range j.Source {
		if s.Type == "kafka" {
			add("kafka.poll")
			if j.Checkpointing {
				add("kafka.snapshot", "kafka.commit-offsets")
			}
		}
	}
	for _, s := range j.Sinks {
		switch {
		case s.Type == "file":
			add("file.write", "file.precommit", "file.commit", "file.commit-done")
		case s.Type == "kafka" && s.Guarantee == ExactlyOnce:
			add("kafka.txn.write", "kafka.txn.precommit", "kafka.txn.commit", "kafka.txn.committed")
		case s.Type == "kafka" && j.Checkpointing:
			add("kafka.sink.flush")
		}
	}
	return pts
}

// undisturbed runs the job to its end in a daemon nothing disturbs.
func (r *runner) undisturbed(ctx context.Context, p *place) error {
	d := p.daemon
	defer d.close()
	start := time.Now()
	if err := d.start(ctx, ""); err != nil {
		return err
	}
	id, err := r.submit(ctx, p, "")
	if err != nil {
		return err
	}
	submitted := time.Now()
	info, err := r.waitEnd(ctx, p, id)
	if err != nil {
		return err
	}
	p.info.WallMs, p.info.JobMs = msSince(start), msSince(submitted)
	p.info.State, p.info.Error = string(info.State), info.Error
	d.stop()
	if info.State != api.StateFinished {
		return fmt.Errorf("the job ended %s in the undisturbed run, before any fault: %s (its daemon's log: %s)", info.State, info.Error, d.log.Name())
	}
	return nil
}

// disturbed runs the job through the faults, then to its end.
func (r *runner) disturbed(ctx context.Context, p *place) error {
	d := p.daemon
	defer d.close()
	faults := r.rep.Faults
	rule := func(i int) string {
		if i < len(faults) && faults[i].Kind == FaultExit {
			return fmt.Sprintf("%s:exit,nth=%d", faults[i].Point, faults[i].Hit)
		}
		return ""
	}
	r.start = time.Now()
	if err := d.start(ctx, rule(0)); err != nil {
		return err
	}
	sub := &submission{reqID: randomHex(16)}
	if err := r.ensureSubmitted(ctx, p, sub); err != nil {
		return err
	}
	submitted := time.Now()
	finished := false
	for i := range faults {
		f := &faults[i]
		if finished {
			f.Note = "not fired: the job had finished"
			continue
		}
		var err error
		switch f.Kind {
		case FaultExit:
			finished, err = r.exitFault(ctx, p, sub, f)
			if err == nil && f.Fired {
				err = d.start(ctx, rule(i+1))
			}
		case FaultKill:
			if finished, err = r.waitMoment(ctx, p, sub, f); err == nil && !finished {
				d.kill()
				r.fired(f)
				err = d.start(ctx, rule(i+1))
			}
		case FaultStopRestore:
			if finished, err = r.waitMoment(ctx, p, sub, f); err == nil && !finished {
				finished, err = r.stopRestore(ctx, p, sub, f, rule(i+1))
			}
		}
		if err == nil && !finished {
			err = r.ensureSubmitted(ctx, p, sub)
		}
		if err != nil {
			return err
		}
		if f.Fired {
			r.say("  fault %d: %s", i+1, f.describe())
		}
	}
	for !d.running() || sub.id == "" {
		if !d.running() {
			if err := d.start(ctx, ""); err != nil {
				return err
			}
		}
		if err := r.ensureSubmitted(ctx, p, sub); err != nil {
			return err
		}
	}
	info, err := r.waitEnd(ctx, p, sub.id)
	if err != nil {
		return err
	}
	p.info.WallMs, p.info.JobMs = msSince(r.start), msSince(submitted)
	p.info.State, p.info.Error = string(info.State), info.Error
	d.stop()
	return nil
}

// submission is the job of the disturbed run: the id the daemon gave it,
// or, until it answered, the request to send again. A daemon that dies
// (an exit at a fault point) while it answers a submission may have
// created the job: the same request id again returns that job instead of
// creating a second one.
type submission struct {
	id, reqID, savepoint string
}

// ensureSubmitted submits the job unless it was, while the daemon runs; a
// daemon that died meanwhile leaves it for the next.
func (r *runner) ensureSubmitted(ctx context.Context, p *place, sub *submission) error {
	if sub.id != "" || !p.daemon.running() {
		return nil
	}
	id, err := r.submitReq(ctx, p, sub.savepoint, sub.reqID)
	if err != nil {
		if p.daemon.exited() {
			return nil
		}
		return err
	}
	sub.id = id
	return nil
}

func (r *runner) fired(f *Fault) {
	f.Fired = true
	f.AtMs = msSince(r.start)
}

// exitFault waits for the daemon to exit at f's point, or for the job to
// finish first (the point was not passed f.Hit times).
func (r *runner) exitFault(ctx context.Context, p *place, sub *submission, f *Fault) (finished bool, err error) {
	d := p.daemon
	// A point the job does not pass soon (no checkpoint within the
	// window, a sink that writes nothing more) must not turn the fault
	// into none: it becomes a kill -9 at the end of the wait.
	deadline := time.Now().Add(max(2*r.window, time.Second))
	for {
		if time.Now().After(deadline) && sub.id != "" && !d.exited() {
			d.kill()
			r.fired(f)
			f.Note = fmt.Sprintf("%s was not passed %d times within %s: killed -9 there instead", f.Point, f.Hit, max(2*r.window, time.Second))
			return false, nil
		}
		if d.exited() {
			if d.firedFault(f.Point) {
				r.fired(f)
				return false, nil
			}
			return false, fmt.Errorf("the daemon exited (code %d) in the disturbed run, not at the planned fault %s: its log ends with:\n%s", d.exitCode(), f.Point, d.logTail())
		}
		if err := r.ensureSubmitted(ctx, p, sub); err != nil {
			return false, err
		}
		if sub.id != "" {
			info, err := r.info(ctx, p, sub.id)
			if err == nil && info.State.Terminal() {
				f.Note = fmt.Sprintf("not fired: the job ended before %s was passed %d times", f.Point, f.Hit)
				return true, nil
			}
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return false, err
		}
	}
}

// waitMoment waits until the job runs, then f's moment later; finished:
// the job ended first.
func (r *runner) waitMoment(ctx context.Context, p *place, sub *submission, f *Fault) (finished bool, err error) {
	for {
		if err := r.ensureSubmitted(ctx, p, sub); err != nil {
			return false, err
		}
		if sub.id != "" {
			info, err := r.info(ctx, p, sub.id)
			if err == nil && info.State == api.StateRunning {
				break
			}
			if err == nil && info.State.Terminal() {
				f.Note = "not fired: the job had ended"
				return true, nil
			}
		}
		if p.daemon.exited() {
			return false, fmt.Errorf("the daemon exited (code %d) in the disturbed run with no fault planned: its log ends with:\n%s", p.daemon.exitCode(), p.daemon.logTail())
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return false, err
		}
	}
	until := time.Now().Add(time.Duration(f.AfterMs * float64(time.Millisecond)))
	for time.Now().Before(until) {
		if err := sleep(ctx, min(20*time.Millisecond, time.Until(until))); err != nil {
			return false, err
		}
		if info, err := r.info(ctx, p, sub.id); err == nil && info.State.Terminal() {
			f.Note = "not fired: the job ended before its moment"
			return true, nil
		}
	}
	return false, nil
}

// stopRestore stops the job with a savepoint and submits it again from
// it. When the next fault is an exit, the daemon is restarted (with no job
// running, a clean shutdown) under that fault's rule before the run -s.
func (r *runner) stopRestore(ctx context.Context, p *place, sub *submission, f *Fault, next string) (bool, error) {
	cl, err := p.daemon.client()
	if err != nil {
		return false, err
	}
	defer cl.Close()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	resp, err := cl.Stop(sctx, sub.id, api.SavepointRequest{})
	cancel()
	if err != nil {
		if info, ierr := r.info(ctx, p, sub.id); ierr == nil && info.State.Terminal() {
			f.Note = "not fired: the job ended before the stop"
			return true, nil
		}
		return false, fmt.Errorf("stop the job in the disturbed run: %w", err)
	}
	r.fired(f)
	f.Note = "savepoint " + filepath.Base(resp.Path)
	*sub = submission{reqID: randomHex(16), savepoint: resp.Path}
	if next != "" {
		p.daemon.stop()
		if err := p.daemon.start(ctx, next); err != nil {
			return false, err
		}
	}
	return false, nil
}

// submit runs the run's spec.
func (r *runner) submit(ctx context.Context, p *place, sp string) (string, error) {
	return r.submitReq(ctx, p, sp, randomHex(16))
}

// submitReq runs the run's spec (from savepoint sp when set) with request
// id reqID.
func (r *runner) submitReq(ctx context.Context, p *place, sp, reqID string) (string, error) {
	cl, err := p.daemon.client()
	if err != nil {
		return "", err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Submit retries a request whose answer was lost for some 3 s; a
	// daemon that exited will not answer it: give up at once, and ask the
	// next daemon with the same request id.
	done := p.daemon.done
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := cl.Submit(ctx, api.SubmitRequest{Spec: string(p.src), File: p.spec, SavepointPath: sp, RequestID: reqID})
	if err != nil {
		return "", fmt.Errorf("submit the job to the %s run's daemon: %w", p.name, err)
	}
	p.info.Jobs++
	return resp.ID, nil
}

func (r *runner) info(ctx context.Context, p *place, id string) (*api.JobInfo, error) {
	cl, err := p.daemon.client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return cl.Info(ctx, id)
}

// waitEnd waits for the job to end (FINISHED, FAILED or CANCELED).
func (r *runner) waitEnd(ctx context.Context, p *place, id string) (*api.JobInfo, error) {
	for {
		info, err := r.info(ctx, p, id)
		if err == nil && info.State.Terminal() {
			return info, nil
		}
		if p.daemon.exited() {
			return nil, fmt.Errorf("the %s run's daemon exited (code %d) while the job ran: its log ends with:\n%s", p.name, p.daemon.exitCode(), p.daemon.logTail())
		}
		var ae *api.Error
		if errors.As(err, &ae) && ae.Code == api.CodeNotFound {
			return nil, fmt.Errorf("the %s run's daemon does not know job %s: %w", p.name, id, err)
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func (f Fault) describe() string {
	switch f.Kind {
	case FaultExit:
		return fmt.Sprintf("exit at %s (hit %d)", f.Point, f.Hit)
	case FaultKill:
		return fmt.Sprintf("kill -9, %s after the job ran", ms(f.AfterMs))
	}
	return fmt.Sprintf("stop → run -s, %s after the job ran", ms(f.AfterMs))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func ms(v float64) string {
	return (time.Duration(v * float64(time.Millisecond))).Round(time.Millisecond).String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
