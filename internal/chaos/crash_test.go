package chaos

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The crash suite crashes a datagen → keyBy → file job at a hit of a fault
// point: the hook takes what a process crash or a power loss would leave
// of the job's MemFS at that instant (CrashClone), and from then on every
// filesystem operation and every fault point fails, as if the process
// were gone. Recovery finds the latest complete checkpoint on the crashed
// disk (or starts fresh when there is none), runs a new job from it to the
// end, and the checker must find every record exactly once.
//
// Each point is crashed at its first hits, at its first hit after the
// sources emitted fractions of the input (see crashSweep), at its first
// hit after they emitted everything (the final checkpoint) and, for the
// points of a restore, in a job restored from a checkpoint. A crash that
// comes after the job finished (a discard running late) leaves nothing to
// recover: the output must be complete as it is.

const crashRecords = 3000

func crashSpec(rate int) string {
	return fmt.Sprintf(`
name: chaos-crash
parallelism: 2
checkpointing: {interval: 25ms}
restartStrategy: {type: none}
operators:
  - {uid: gen, type: datagen, count: %d, rate: %d, format: checked}
  - {uid: key, type: keyBy, from: [gen], expr: "split"}
  - {uid: out, type: file, from: [key], path: %s, bucket: none, rolling: {maxPartSize: 1KiB}}
`, crashRecords, rate, outDir)
}

const crashRate = 6000 // records/s: half a second, some twenty checkpoints

// workload is a job the crash suite crashes: its spec at a datagen rate
// (0: unlimited, for recoveries), how many records its sources emit, and
// the check of its committed output.
type workload struct {
	name    string
	spec    func(rate int) string
	records int
	check   func(fsys vfs.FS) (*eocheck.Report, error)
	// exact judges a report: nil is eocheck.Report.OK (nothing lost,
	// duplicated or reordered); a job that does not keep order sets its own.
	exact func(*eocheck.Report) bool
	// fileSinks is the number of file sink subtasks (0: 2, the suites'
	// parallelism).
	fileSinks int
}

func (w workload) sinks() int {
	if w.fileSinks == 0 {
		return 2
	}
	return w.fileSinks
}

func (w workload) ok(r *eocheck.Report) bool {
	if w.exact != nil {
		return w.exact(r)
	}
	return r.OK()
}

// fileWorkload is datagen -> keyBy -> file, checked record by record.
var fileWorkload = workload{name: "file", spec: crashSpec, records: crashRecords,
	check: func(fsys vfs.FS) (*eocheck.Report, error) {
		return checkOutput(fsys, eocheck.Datagen(2, 1, crashRecords))
	}}

// crashHook crashes at the k-th hit of point (counting only hits for
// which counts() holds, when set). It is the job's FaultHook and, through
// vfs.WithFaults, the injector of its filesystem.
type crashHook struct {
	mem    *vfs.MemFS
	point  string
	k      int
	model  vfs.CrashModel
	counts func() bool

	job     atomic.Pointer[engine.Job]
	mu      sync.Mutex
	hits    int
	clone   *vfs.MemFS
	at      string
	ended   bool // the job had finished when it crashed
	crashed chan struct{}
}

func newCrashHook(mem *vfs.MemFS, point string, k int, model vfs.CrashModel) *crashHook {
	return &crashHook{mem: mem, point: point, k: k, model: model, crashed: make(chan struct{})}
}

func (h *crashHook) Fire(point string, attrs ...any) error {
	counts := h.counts == nil || point != h.point || h.counts()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.clone != nil {
		return fmt.Errorf("%s after the crash: %w", point, vfs.ErrCrashed)
	}
	if point != h.point || !counts {
		return nil
	}
	h.hits++
	if h.hits < h.k {
		return nil
	}
	h.clone = h.mem.CrashClone(h.model)
	h.at = fmt.Sprintf("%s hit %d %v", point, h.hits, attrs)
	// A discard still running when the job finished: nothing to recover.
	if j := h.job.Load(); j != nil && j.State() == api.StateFinished {
		h.ended = true
	}
	close(h.crashed)
	return fmt.Errorf("crash at %s: %w", h.at, vfs.ErrCrashed)
}

// MaybeError fails every filesystem operation after the crash.
func (h *crashHook) MaybeError(vfs.Op) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.clone != nil {
		return vfs.ErrCrashed
	}
	return nil
}

// result returns what survived the crash (nil when it did not happen),
// where it happened, and the hits counted.
func (h *crashHook) result() (*vfs.MemFS, string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.clone, h.at, h.hits
}

// hitCounter counts the hits of every point (a reference run).
type hitCounter struct {
	mu   sync.Mutex
	hits map[string]int
}

func (c *hitCounter) Fire(point string, _ ...any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits[point]++
	return nil
}

// crashCase is one crash of the suite.
type crashCase struct {
	point string
	k     int
	// after > 0 counts hits only once the sources emitted that fraction
	// of the input (1: all of it).
	after    float64
	restored bool // crash a job restored from a checkpoint
	model    vfs.CrashModel
}

func (c crashCase) String() string {
	s := fmt.Sprintf("%s hit %d", c.point, c.k)
	if c.after > 0 {
		s += fmt.Sprintf(" after %.0f%% of the input", 100*c.after)
	}
	if c.restored {
		s += " of a restored job"
	}
	return s + " (" + c.model.String() + ")"
}

type crashOutcome struct {
	fired    bool
	at       string
	restored bool // recovery restored a checkpoint (else started fresh)
	report   *eocheck.Report
	err      error
	// unreached: the job ended before its fault point was hit.
	unreached bool
}

// restoreBase crashes the job (process crash) when a sink finished
// committing the second checkpoint: the disk a restored job starts from.
func restoreBase(w workload) (*vfs.MemFS, string, error) {
	mem := vfs.NewMem()
	h := newCrashHook(mem, "file.commit-done", 3, vfs.ProcessCrash)
	j, err := job{spec: w.spec(crashRate), fs: vfs.WithFaults(mem, h), faults: h}.start()
	if err != nil {
		return nil, "", err
	}
	awaitCrash(j, h)
	base, _, _ := h.result()
	if base == nil {
		return nil, "", fmt.Errorf("restore base: the job ended %s before committing 2 checkpoints", j.State())
	}
	dir, _, err := latestComplete(base, j)
	if err == nil && dir == "" {
		err = errors.New("restore base: no complete checkpoint")
	}
	return base, dir, err
}

// awaitCrash waits for the crash (or the end of the job), then cancels
// the job: the process is gone.
func awaitCrash(j *engine.Job, h *crashHook) {
	select {
	case <-h.crashed:
	case <-j.Done():
	case <-time.After(60 * time.Second):
	}
	_ = j.Cancel() // an error only says the job had ended
	<-j.Done()
}

func runCrash(w workload, c crashCase) (o crashOutcome) {
	mem, base := vfs.NewMem(), ""
	if c.restored {
		var err error
		if mem, base, err = restoreBase(w); err != nil {
			return crashOutcome{err: err}
		}
	}
	h := newCrashHook(mem, c.point, c.k, c.model)
	if c.after > 0 {
		h.counts = func() bool {
			j := h.job.Load()
			return j != nil && float64(j.Info().Operators[0].RecordsOut) >= c.after*float64(w.records)
		}
	}
	j, err := job{spec: w.spec(crashRate), fs: vfs.WithFaults(mem, h), restore: base, faults: h}.start()
	if err != nil {
		return crashOutcome{err: err}
	}
	h.job.Store(j)
	awaitCrash(j, h)
	clone, at, hits := h.result()
	if clone == nil {
		return crashOutcome{unreached: true, err: fmt.Errorf("not reached: the job ended %s with %d hits", j.State(), hits)}
	}
	o = crashOutcome{fired: true, at: at}
	h.mu.Lock()
	ended := h.ended
	h.mu.Unlock()
	if ended {
		// The job had finished (and deleted its checkpoints): its output
		// must be complete as it is.
		if o.report, o.err = w.check(clone); o.err == nil && !w.ok(o.report) {
			o.err = fmt.Errorf("crashed at %s after the job finished: %s", at, o.report)
		}
		return o
	}
	dir, _, err := latestComplete(clone, j)
	if err != nil {
		o.err = err
		return o
	}
	if dir == "" {
		dir = base // nothing newer than what the crashed job started from
	}
	o.restored = dir != ""
	if o.report, o.err = recoverRun(w, clone, j.ID(), dir); o.err != nil {
		o.err = fmt.Errorf("crashed at %s: %w", at, o.err)
	}
	return o
}

// recoverRun runs job id from dir ("" fresh) on fsys to the end and checks
// the output.
func recoverRun(w workload, fsys vfs.FS, id, dir string) (*eocheck.Report, error) {
	j, err := job{id: id, spec: w.spec(0), fs: fsys, restore: dir}.start()
	if err != nil {
		return nil, err
	}
	if awaitEnd(j, 60*time.Second) || j.State() != api.StateFinished {
		return nil, fmt.Errorf("recovery from %q ended %s: %s", dir, j.State(), j.Info().Error)
	}
	r, err := w.check(fsys)
	if err == nil && !w.ok(r) {
		err = fmt.Errorf("recovery from %q: %s", dir, r)
	}
	return r, err
}

// crashPoints are the fault points a datagen → keyBy → file job reaches;
// restoreOnly ones only when it starts from a checkpoint.
var (
	crashPoints = []string{
		"task.open", "task.snapshot", "task.notify-complete",
		"checkpoint.write-state", "checkpoint.publish-metadata", "checkpoint.record", "checkpoint.discard",
		"file.write", "file.precommit", "file.commit", "file.commit-done", "file.restore",
	}
	restoreOnly = map[string]bool{"file.restore": true}
	// latePoints are reached, deterministically, by the final checkpoint.
	latePoints = []string{
		"task.snapshot", "checkpoint.write-state", "checkpoint.publish-metadata", "checkpoint.record",
		"task.notify-complete", "file.precommit", "file.commit-done", "checkpoint.discard",
	}
)

// crashSweep is where a sweep crashes each point: at its first hits, and
// at its first hit after a fraction of the input (a loaded machine makes
// fewer checkpoints, so later hits are counted from a point in the input,
// not from the start).
var crashSweep = map[sweep]struct {
	hits  []int
	after []float64
}{
	sweepShort:   {[]int{1}, []float64{0.5}},
	sweepDefault: {[]int{1, 2}, []float64{0.1, 0.25, 0.4, 0.55, 0.7, 0.85}},
	sweepLong:    {[]int{1, 2}, fractions(0.05, 0.95, 0.05)},
}

// fractions lists from, from+step, … up to to.
func fractions(from, to, step float64) []float64 {
	var out []float64
	for f := from; f <= to+1e-9; f += step {
		out = append(out, f)
	}
	return out
}

func crashCases(t *testing.T, w workload, s sweep) []crashCase {
	ref := &hitCounter{hits: map[string]int{}}
	j, err := job{spec: w.spec(crashRate), fs: vfs.NewMem(), faults: ref}.start()
	require.NoError(t, err)
	require.False(t, awaitEnd(j, 60*time.Second))
	require.Equal(t, api.StateFinished, j.State(), j.Info().Error)
	t.Logf("reference run: hits %v", ref.hits)
	var base []crashCase
	for _, p := range crashPoints {
		if restoreOnly[p] {
			continue
		}
		require.Positive(t, ref.hits[p], "the job never reaches %s", p)
		for _, k := range crashSweep[s].hits {
			if k <= ref.hits[p] { // task.open: 6
				base = append(base, crashCase{point: p, k: k})
			}
		}
		if p == "task.open" {
			continue // only at the start
		}
		for _, f := range crashSweep[s].after {
			base = append(base, crashCase{point: p, k: 1, after: f})
		}
	}
	for _, p := range latePoints {
		base = append(base, crashCase{point: p, k: 1, after: 1})
	}
	// A restore opens every subtask (as many as the reference run
	// opened), the file sinks among them.
	for _, c := range []crashCase{{point: "task.open", k: 1}, {point: "task.open", k: ref.hits["task.open"]},
		{point: "file.restore", k: 1}, {point: "file.restore", k: w.sinks()}} {
		c.restored = true
		base = append(base, c)
	}
	var cases []crashCase
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		for _, c := range base {
			c.model = model
			cases = append(cases, c)
		}
	}
	return cases
}

func TestCrashAtEveryFaultPoint(t *testing.T) {
	crashSuite(t, fileWorkload, sweepSize(), "crash at every fault point",
		"%d points x 2 crash models (process crash, power loss), at several hits")
}

// crashSuite crashes workload w at every case of sweep s and records the
// outcome in the scorecard under suite, its faults described by faults (a
// format taking the number of points).
func crashSuite(t *testing.T, w workload, s sweep, suite, faults string) {
	start := time.Now()
	cases := crashCases(t, w, s)
	outs := make([]crashOutcome, len(cases))
	// A case whose fault point the job did not reach before it finished
	// (a loaded machine completes fewer checkpoints of a bounded input)
	// runs again, twice at most, as the disk fault sweep's do: it says
	// nothing of recovery either way.
	parallel(len(cases), 6, func(i int) {
		for attempt := 0; ; attempt++ {
			outs[i] = runCrash(w, cases[i])
			if !outs[i].unreached || attempt == 2 {
				return
			}
		}
	})

	var sum tally
	var errs []string
	points := map[string]bool{}
	fresh, restored := 0, 0
	for i, o := range outs {
		fired := 0
		if o.fired {
			fired = 1
			points[cases[i].point] = true
			if o.restored {
				restored++
			} else {
				fresh++
			}
		}
		sum.add(1, fired, o.report)
		if o.err != nil {
			errs = append(errs, fmt.Sprintf("crash at %s: %v", cases[i], o.err))
		}
	}
	scorecard.Record(t, start, scorecard.Entry{Suite: suite, Faults: fmt.Sprintf(faults, len(points)),
		Planned: sum.planned, Fired: sum.fired, Cases: sum.cases, Records: sum.records, Lost: sum.lost, Duplicated: sum.dup})
	t.Logf("%d crashes (%s sweep) at %d points: %d recovered from a checkpoint, %d from scratch; %d checked (records or windows), lost %d, duplicated %d",
		sum.fired, s, len(points), restored, fresh, sum.records, sum.lost, sum.dup)
	require.Empty(t, errs, strings.Join(errs, "\n"))
	require.NoError(t, eocheck.Fired(sum.planned, sum.fired))
	for _, p := range crashPoints {
		require.True(t, points[p], "no crash at %s", p)
	}
}
