package chaos

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The jobs of the suites write their output to outDir and their
// checkpoints to chkDir of one MemFS.
const (
	outDir = "/out"
	chkDir = "/chk"
)

// sweep is how big a sweep is: -short, default, or FLINKGO_CHAOS=long.
type sweep int

const (
	sweepShort sweep = iota
	sweepDefault
	sweepLong
)

func sweepSize() sweep {
	switch {
	case os.Getenv("FLINKGO_CHAOS") == "long":
		return sweepLong
	case testing.Short():
		return sweepShort
	}
	return sweepDefault
}

func (s sweep) String() string { return [...]string{"short", "default", "long"}[s] }

var jobSeq atomic.Int64

// job describes a run: the spec and where it runs.
type job struct {
	id       string // "" a new job; a recovery runs as the crashed job, as the daemon resumes it
	spec     string
	fs       vfs.FS
	restore  string // snapshot directory to start from ("" fresh)
	faults   runtime.FaultHook
	onRecord func(*engine.Job, engine.Recovery) error
	log      zerolog.Logger // zero: no logging
}

// start compiles and starts the job.
func (o job) start() (*engine.Job, error) {
	g, err := engine.Compile(testRegistry, "chaos.yaml", []byte(o.spec), engine.Defaults{})
	if err != nil {
		return nil, err
	}
	var r *engine.Restore
	if o.restore != "" {
		if r, err = engine.LoadRestore(o.fs, o.restore); err != nil {
			return nil, fmt.Errorf("load restore %s: %w", o.restore, err)
		}
	}
	id := o.id
	if id == "" {
		id = fmt.Sprintf("chaos%d-%d", time.Now().UnixNano()%1e9, jobSeq.Add(1))
	}
	return engine.StartJob(engine.JobOptions{ID: id, Graph: g, Env: &engine.Env{FS: o.fs, Faults: o.faults},
		CheckpointsDir: chkDir, Restore: r, OnRecord: o.onRecord, Log: o.log}), nil
}

// awaitEnd waits for a job that should end by itself, cancelling it after
// d (t.Fatal cannot be used off the test goroutine); timedOut reports the
// cancel.
func awaitEnd(j *engine.Job, d time.Duration) (timedOut bool) {
	select {
	case <-j.Done():
		return false
	case <-time.After(d):
		_ = j.Cancel()
		<-j.Done()
		return true
	}
}

// latestComplete is where the daemon would resume job j on fsys after a
// crash: the snapshot the restore decision loads with the recovery facts
// the job recorded ("" for a fresh start; a refusal is an error).
func latestComplete(fsys vfs.FS, j *engine.Job) (string, int64, error) {
	return recoverPoint(fsys, j.ID(), j.Recovery())
}

// recoverPoint is latestComplete with the recovery facts rec.
func recoverPoint(fsys vfs.FS, jobID string, rec engine.Recovery) (string, int64, error) {
	f, err := engine.RestoreFactsOf(fsys, chkDir, jobID, rec)
	if err != nil {
		return "", 0, err
	}
	r, d := engine.ChooseRestore(fsys, f, zerolog.Nop())
	switch d.Action {
	case checkpoint.RestoreRefuse:
		return "", 0, errors.New(d.Reason)
	case checkpoint.RestoreFresh:
		return "", 0, nil
	}
	return r.Dir, r.Meta.CheckpointID, nil
}

// checkOutput runs the exactly-once checker on the committed output.
func checkOutput(fsys vfs.FS, e eocheck.Expectation) (*eocheck.Report, error) {
	return e.Check(eocheck.FS(fsys, "/"), outDir[1:])
}

// tally sums the outcomes of a suite for its scorecard entry.
type tally struct {
	cases, planned, fired int
	records, lost, dup    int64
}

func (t *tally) add(planned, fired int, r *eocheck.Report) {
	t.cases++
	t.planned += planned
	t.fired += fired
	if r != nil {
		t.records += r.Expected
		t.lost += r.Lost
		t.dup += r.Duplicated
	}
}

// parallel runs fn(i) for i in [0, n) on up to width goroutines (the jobs
// mostly wait for the datagen rate).
func parallel(n, width int, fn func(i int)) {
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}
