package file

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The crash sweep runs a bounded job on a MemFS and crashes it at the
// k-th mutating operation of the sink (every file operation under /out:
// creating, writing, rolling, pre-committing, committing), for every k,
// keeping what a process crash or a power loss would leave. Recovery
// restores the latest complete checkpoint found on the crashed disk (or
// starts fresh when there is none), runs to the end, and the independent
// checker must find every record exactly once. A second sweep crashes the
// recovery itself (re-commit, truncate, take back, cleanup) and recovers
// again.

const (
	crashRecords = 1000
	crashOut     = "/out"
	crashChk     = "/chk"
)

// crashLayout is where a crash job keeps its output and checkpoints, and
// the FS it runs on over the crashed MemFS: the local layout, or object
// storage kept in files of the MemFS (s3crash_test.go).
type crashLayout struct {
	out, chk string
	wrap     func(vfs.FS) vfs.FS
	// sinkPrefixes are the MemFS paths of the sink's operations.
	sinkPrefixes []string
	// sinkOpts are more options of the sink (format: parquet); check
	// reads its finished files (nil: verify.Run, for line and json).
	sinkOpts string
	check    func(fsys vfs.FS, out string) (*verify.Report, error)
}

// verifyOutput checks the finished files under out for idx values.
func (L crashLayout) verifyOutput(fsys vfs.FS) (*verify.Report, error) {
	if L.check != nil {
		return L.check(fsys, L.out)
	}
	return verify.Run(verify.Options{Path: L.out, Field: "idx", FS: eocheck.FS(fsys, L.out)})
}

var crashLocal = crashLayout{out: crashOut, chk: crashChk, wrap: func(f vfs.FS) vfs.FS { return f }, sinkPrefixes: []string{crashOut}}

func crashSpec(rate int) string { return crashSpecAt(crashOut, "", rate) }

func crashSpecAt(out, sinkOpts string, rate int) string {
	return fmt.Sprintf(`
name: crash
parallelism: 2
checkpointing: {interval: 10ms}
restartStrategy: {type: none}
operators:
  - {uid: gen, type: datagen, count: %d, rate: %d}
  - {uid: out, type: file, from: [gen], path: %s, bucket: none, rolling: {maxPartSize: 2KiB}%s}
`, crashRecords, rate, out, sinkOpts)
}

// sinkCrash crashes a MemFS at the k-th mutating operation under /out:
// it keeps mem.CrashClone(model) and fails that operation and every later
// one with vfs.ErrCrashed, as vfs.CrashAt does for all operations.
type sinkCrash struct {
	mem      *vfs.MemFS
	k        int
	model    vfs.CrashModel
	prefixes []string

	mu    sync.Mutex
	seen  int
	clone *vfs.MemFS
	last  vfs.Op
}

func (c *sinkCrash) MaybeError(op vfs.Op) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clone != nil {
		return vfs.ErrCrashed
	}
	if !vfs.IsMutating(op) || !hasAnyPrefix(op.Path, c.prefixes) {
		return nil
	}
	c.seen++
	if c.seen < c.k {
		return nil
	}
	c.clone, c.last = c.mem.CrashClone(c.model), op
	return vfs.ErrCrashed
}

func (c *sinkCrash) FS() vfs.FS { return vfs.WithFaults(c.mem, c) }

func (c *sinkCrash) Clone() *vfs.MemFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clone
}

func (c *sinkCrash) LastOp() vfs.Op {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func (c *sinkCrash) seenOps() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// crasher is a crash point on a MemFS: *vfs.CrashPoint (at any mutating
// operation) or *sinkCrash (at mutating operations of the sink).
type crasher interface {
	FS() vfs.FS
	Clone() *vfs.MemFS
	LastOp() vfs.Op
}

// crashAt makes the crash point k (1-based) of a sweep.
type crashAt func(L crashLayout, mem *vfs.MemFS, k int, model vfs.CrashModel) crasher

func atSinkOp(L crashLayout, mem *vfs.MemFS, k int, model vfs.CrashModel) crasher {
	return &sinkCrash{mem: mem, k: k, model: model, prefixes: L.sinkPrefixes}
}

func atAnyOp(_ crashLayout, mem *vfs.MemFS, k int, model vfs.CrashModel) crasher {
	return vfs.CrashAt(mem, k, model)
}

func hasAnyPrefix(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// awaitEnd waits for a job that should end by itself, cancelling it
// after a while (t.Fatal cannot be used off the test goroutine).
func awaitEnd(j *engine.Job, d time.Duration) api.JobState {
	select {
	case <-j.Done():
	case <-time.After(d):
		_ = j.Cancel()
		<-j.Done()
	}
	return j.State()
}

type crashOutcome struct {
	crashed  bool   // the crash point was reached
	op       vfs.Op // the operation crashed at
	restored bool   // recovery restored a checkpoint (else started fresh)
	// unrecoverable: finished files but no complete checkpoint to restore,
	// so a fresh start would duplicate them. Never expected: every commit
	// follows a persisted checkpoint (the final one of a bounded job too).
	unrecoverable bool
	err           error
}

// runCrashJob runs the crash job on fsys, from the snapshot restore (""
// fresh) at datagen rate rate, until it ends. A recovery runs as the
// crashed job (id), as the daemon resumes it: its output directory is that
// job's; id "" is a new job.
func runCrashJob(L crashLayout, mem vfs.FS, id, restore string, rate int) (*engine.Job, error) {
	fsys := L.wrap(mem)
	g, err := engine.Compile(testRegistry, "crash.yaml", []byte(crashSpecAt(L.out, L.sinkOpts, rate)), engine.Defaults{})
	if err != nil {
		return nil, err
	}
	var r *engine.Restore
	if restore != "" {
		if r, err = engine.LoadRestore(fsys, restore); err != nil {
			return nil, err
		}
	}
	if id == "" {
		id = fmt.Sprintf("crash%d", time.Now().UnixNano())
	}
	j := engine.StartJob(engine.JobOptions{ID: id, Graph: g,
		Env: &engine.Env{FS: fsys}, CheckpointsDir: L.chk, Restore: r})
	awaitEnd(j, 30*time.Second)
	return j, nil
}

func latestCheckpoint(L crashLayout, clone *vfs.MemFS, jobID string) (string, error) {
	dir, _, _, err := checkpoint.LatestComplete(L.wrap(clone), L.chk, jobID)
	return dir, err
}

// recoverAndCheck restores dir ("" fresh) on clone, runs to the end and
// checks the output with the independent checker. A job that had FINISHED
// when the crash hit (its checkpoints being deleted) is not recovered, as
// the daemon does not recover finished jobs: its output must be complete.
func recoverAndCheck(L crashLayout, clone *vfs.MemFS, id, dir string, finished bool, o *crashOutcome) {
	o.restored = dir != ""
	if finished {
		o.restored = false
		checkOutput(L, clone, "after the job finished", o)
		return
	}
	if dir == "" {
		r, err := L.verifyOutput(L.wrap(clone))
		if err == nil && r.Records > 0 {
			o.unrecoverable = true
			return
		}
	}
	j, err := runCrashJob(L, clone, id, dir, 0)
	if err != nil {
		o.err = err
		return
	}
	if st := j.State(); st != api.StateFinished {
		o.err = fmt.Errorf("recovery from %q ended %s: %s", dir, st, j.Info().Error)
		return
	}
	checkOutput(L, clone, fmt.Sprintf("recovered from %q", dir), o)
}

// checkOutput checks the finished files hold every record exactly once.
func checkOutput(L crashLayout, clone *vfs.MemFS, what string, o *crashOutcome) {
	r, err := L.verifyOutput(L.wrap(clone))
	if err != nil {
		o.err = err
		return
	}
	if !r.OK() || r.Records != crashRecords || r.First != 1 || r.Last != crashRecords {
		o.err = fmt.Errorf("%s: %d records, %d distinct, %d..%d, gaps %v, duplicates %v",
			what, r.Records, r.Distinct, r.First, r.Last, r.Gaps, r.DuplicateSamples)
	}
}

// crashPoint crashes the job at its k-th (sink or any) operation and
// recovers. With k2 > 0 the recovery (from the latest checkpoint) is
// crashed at its own k2-th operation — re-commit, take back, truncate,
// cleanup — and recovered once more.
func crashPoint(L crashLayout, at crashAt, k, k2 int, model vfs.CrashModel) (o crashOutcome) {
	c := at(L, vfs.NewMem(), k, model)
	j, err := runCrashJob(L, c.FS(), "", "", 10000)
	if err != nil {
		return crashOutcome{err: err}
	}
	clone := c.Clone()
	if clone == nil {
		return o // this run had fewer than k operations
	}
	dir, err := latestCheckpoint(L, clone, j.ID())
	if err != nil {
		return crashOutcome{err: err}
	}
	if k2 == 0 {
		o = crashOutcome{crashed: true, op: c.LastOp()}
		recoverAndCheck(L, clone, j.ID(), dir, j.State() == api.StateFinished, &o)
		return o
	}
	if dir == "" {
		return o // nothing to restore: no recovery to crash
	}
	c2 := at(L, clone, k2, model)
	j2, err := runCrashJob(L, c2.FS(), j.ID(), dir, 0)
	if err != nil {
		return crashOutcome{err: err}
	}
	clone2 := c2.Clone()
	if clone2 == nil {
		return o
	}
	// The first job's checkpoint is still there; the crashed recovery
	// may have completed newer ones of its own.
	dir2, err := latestCheckpoint(L, clone2, j2.ID())
	if err != nil {
		return crashOutcome{err: err}
	}
	if dir2 == "" {
		dir2 = dir
	}
	o = crashOutcome{crashed: true, op: c2.LastOp()}
	recoverAndCheck(L, clone2, j.ID(), dir2, j2.State() == api.StateFinished, &o)
	return o
}

// sweep runs the points in parallel (the jobs mostly wait on the datagen
// rate); each first-level point k is combined with every k2 (or none).
func sweep(L crashLayout, at crashAt, points, k2s []int, model vfs.CrashModel) []crashOutcome {
	if len(k2s) == 0 {
		k2s = []int{0}
	}
	out := make([]crashOutcome, len(points)*len(k2s))
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for i, k := range points {
		for i2, k2 := range k2s {
			wg.Add(1)
			go func(slot, k, k2 int) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				o := crashPoint(L, at, k, k2, model)
				if o.err != nil {
					o.err = fmt.Errorf("crash at op %d, then %d (%s, %s): %w", k, k2, o.op, model, o.err)
				}
				out[slot] = o
			}(i*len(k2s)+i2, k, k2)
		}
	}
	wg.Wait()
	return out
}

// tally checks the outcomes and counts them.
func tally(t *testing.T, outs []crashOutcome, kinds map[string]bool) (crashed, restored, unrecoverable int) {
	for _, o := range outs {
		require.NoError(t, o.err)
		if !o.crashed {
			continue
		}
		crashed++
		kinds[o.op.Kind.String()] = true
		if o.restored {
			restored++
		}
		if o.unrecoverable {
			unrecoverable++
		}
	}
	return crashed, restored, unrecoverable
}

func TestCrashSweep(t *testing.T) {
	// A run without a crash tells how many sink operations there are.
	c := &sinkCrash{mem: vfs.NewMem(), k: 1 << 30, prefixes: crashLocal.sinkPrefixes}
	j, err := runCrashJob(crashLocal, c.FS(), "", "", 10000)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, j.State(), j.Info().Error)
	n := c.seenOps()
	require.Greater(t, n, 20)
	var points []int
	for k := 1; k <= n+5; k++ { // runs vary a little in length
		if !testing.Short() || k <= 6 || k%3 == 0 {
			points = append(points, k)
		}
	}
	total := 0
	kinds := map[string]bool{}
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		crashed, restored, unrecoverable := tally(t, sweep(crashLocal, atSinkOp, points, nil, model), kinds)
		t.Logf("%s: %d crash points (reference run: %d sink operations), %d recovered from a checkpoint, %d fresh",
			model, crashed, n, restored, crashed-restored)
		require.Zero(t, unrecoverable, "committed output without a complete checkpoint")
		total += crashed
	}
	for _, kind := range []string{"MkdirAll", "Create", "Write", "Sync", "SyncDir", "Rename"} {
		require.True(t, kinds[kind], "no crash at a %s (crashed at %v)", kind, kinds)
	}
	t.Logf("crash points: %d; operation kinds crashed at: %v", total, slices.Sorted(maps.Keys(kinds)))
}

// TestCrashSweepDuringRecovery crashes the recovery of a crashed job at
// each of its first sink operations (re-commit, take back, truncate,
// cleanup, then writing again), and recovers once more.
func TestCrashSweepDuringRecovery(t *testing.T) {
	// Crash points late in the first run leave pending and in-progress
	// parts to restore.
	firsts := []int{30, 45}
	var seconds []int
	for k := 1; k <= 24; k++ {
		seconds = append(seconds, k)
	}
	if testing.Short() {
		firsts = firsts[1:] // the later point: its recovery renames
	}
	total := 0
	kinds := map[string]bool{}
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		crashed, _, unrecoverable := tally(t, sweep(crashLocal, atSinkOp, firsts, seconds, model), kinds)
		require.Zero(t, unrecoverable)
		t.Logf("%s: %d crash points during recovery", model, crashed)
		total += crashed
	}
	for _, kind := range []string{"Rename", "SyncDir", "OpenReadWrite", "Truncate"} {
		require.True(t, kinds[kind], "no crash at a %s during recovery (crashed at %v)", kind, kinds)
	}
	t.Logf("recovery crash points: %d; operation kinds crashed at: %v", total, slices.Sorted(maps.Keys(kinds)))
}

// TestCrashSweepAnyOperation crashes with vfs.CrashAt at a sample of all
// mutating operations of the job, the runtime's checkpoint writes
// included (a crash between the sink's pre-commit and the checkpoint's
// metadata, or between the metadata and the commit).
func TestCrashSweepAnyOperation(t *testing.T) {
	counter := vfs.Count(vfs.NewMem())
	j, err := runCrashJob(crashLocal, counter.FS(), "", "", 10000)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, j.State(), j.Info().Error)
	n := counter.N()
	stride := 4
	if testing.Short() {
		stride = 12
	}
	var points []int
	for k := 1; k <= n; k += stride {
		points = append(points, k)
	}
	total := 0
	kinds := map[string]bool{}
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		crashed, restored, unrecoverable := tally(t, sweep(crashLocal, atAnyOp, points, nil, model), kinds)
		t.Logf("%s: %d crash points (every %dth of %d mutating operations), %d recovered from a checkpoint",
			model, crashed, stride, n, restored)
		require.Zero(t, unrecoverable, "committed output without a complete checkpoint")
		total += crashed
	}
	t.Logf("crash points: %d; operation kinds crashed at: %v", total, slices.Sorted(maps.Keys(kinds)))
}
