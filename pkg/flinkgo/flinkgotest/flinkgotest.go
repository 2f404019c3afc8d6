// Package flinkgotest runs a job spec in the test's own process, for the
// authors of operator types and connectors written in Go: the same engine,
// checkpoints, event time and state as the daemon, without a daemon, with a
// sink that keeps what it receives for the test to read.
//
//	func TestDedupe(t *testing.T) {
//		out := flinkgotest.UniqueName(t)
//		j := flinkgotest.Start(t, `
//	name: dedupe
//	operators:
//	  - {uid: in, type: datagen, count: 100}
//	  - {uid: byIdx, type: keyBy, from: [in], expr: idx % 10}
//	  - {uid: d, type: dedupe, from: [byIdx]}
//	  - {uid: out, type: test-collect, from: [d], name: `+out+`}
//	`, flinkgotest.Options{Types: []runtime.Definition{dedupe.Definition()}})
//		require.Equal(t, api.StateFinished, j.Wait(t, time.Minute))
//		require.Len(t, flinkgotest.Collected(out), 10)
//	}
//
// RunSpecTests runs a spec's tests file (JOB_test.yaml, the file `flinkgo
// test` runs) under go test, with your operator types:
//
//	func TestJobSpec(t *testing.T) {
//		flinkgotest.RunSpecTests(t, "job.yaml", flinkgotest.SpecTestOptions{
//			Types: []runtime.Definition{dedupe.Definition()}})
//	}
//
// The built-in operator types are always there; Options.Types adds yours,
// and the sink type test-collect (option name) keeps each record's value
// as a string under its name until the test ends (Collected). It is part
// of the entry point (pkg/flinkgo): it may run the engine, which is
// internal, and exposes only public types.
package flinkgotest

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/spectest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Options for Start; the zero value runs the spec without checkpoint
// storage (checkpoints still run, and commit, when the spec enables them).
type Options struct {
	// Types are operator types the spec may use besides the built-in ones
	// and test-collect.
	Types []runtime.Definition
	// CheckpointsDir and SavepointsDir are where checkpoints and savepoints
	// go (t.TempDir() is a good choice); Restore is a savepoint or
	// checkpoint to start from, as `run -s` takes.
	CheckpointsDir, SavepointsDir, Restore string
	// FS is the filesystem snapshots and file sinks use (default: the
	// operating system's; vfs.NewMemFS for a crash-simulating one).
	FS vfs.FS
	// Log receives the job's log (default: none).
	Log *zerolog.Logger
}

// Job is a job started by Start, running in the test's process.
type Job struct{ j *engine.Job }

// Start compiles spec and starts it; a spec that does not compile or a
// snapshot that cannot be read fails the test.
func Start(t testing.TB, spec string, o Options) *Job {
	t.Helper()
	return &Job{runtimetest.Start(t, spec, runtimetest.Options{FS: o.FS, CheckpointsDir: o.CheckpointsDir,
		SavepointsDir: o.SavepointsDir, Restore: o.Restore, Log: o.Log, Types: append(all.Definitions(), o.Types...)})}
}

// Wait waits until the job ends and returns its final state; it fails the
// test after timeout.
func (j *Job) Wait(t testing.TB, timeout time.Duration) api.JobState {
	t.Helper()
	return runtimetest.Wait(t, j.j, timeout)
}

// Info is what `flinkgo info` shows of the job.
func (j *Job) Info() api.JobInfo { return j.j.Info() }

// State is the job's state now.
func (j *Job) State() api.JobState { return j.j.State() }

// Savepoint takes a savepoint into dir ("": Options.SavepointsDir) and
// returns its path.
func (j *Job) Savepoint(dir string) (string, error) {
	path, _, err := j.j.Savepoint(dir)
	return path, err
}

// Stop stops the job with a savepoint (drain: fire all timers first) and
// returns its path once the job ended.
func (j *Job) Stop(dir string, drain bool) (string, error) {
	path, _, err := j.j.Stop(dir, drain)
	if err == nil {
		<-j.j.Done()
	}
	return path, err
}

// Cancel cancels the job and waits until it ended, failing the test after
// timeout.
func (j *Job) Cancel(t testing.TB, timeout time.Duration) {
	t.Helper()
	runtimetest.Cancel(t, timeout, j.j)
}

// UniqueName is a name for a test-collect sink that only this test uses
// (forgotten when it ends).
func UniqueName(t testing.TB) string { return runtimetest.UniqueName(t) }

// Collected returns the values the test-collect sink named name received
// so far, in the order they arrived.
func Collected(name string) []string { return runtimetest.Values(name) }

// WaitCollected waits until the sink named name received at least n
// values, failing the test after timeout.
func WaitCollected(t testing.TB, timeout time.Duration, name string, n int) {
	t.Helper()
	runtimetest.WaitCollected(t, timeout, name, n)
}

// SpecTestOptions for RunSpecTests; the zero value runs every test of the
// tests file beside the spec with the built-in operator types.
type SpecTestOptions struct {
	// Types are operator types the spec may use besides the built-in ones
	// (the ones your binary adds with flinkgo.WithOperators).
	Types []runtime.Definition
	// Tests is the tests file ("": JOB_test.yaml beside the spec).
	Tests string
	// Run selects the tests whose name matches it ("": all), as
	// `flinkgo test --run` does.
	Run string
	// Timeout bounds each test's job (0: 10s).
	Timeout time.Duration
}

// RunSpecTests runs the tests of the job spec file spec (JOB_test.yaml
// beside it) as `flinkgo test` does, each as a parallel subtest of t named
// after it that fails with the differences `flinkgo test` prints. It is
// for binaries with operator types of their own: their specs' tests run
// under `go test` with those types. A spec or tests file that is invalid
// fails t with every problem at its line and column.
func RunSpecTests(t *testing.T, spec string, o SpecTestOptions) {
	t.Helper()
	reg, err := runtime.NewRegistry(append(all.Definitions(), o.Types...)...)
	if err != nil {
		t.Fatalf("operator types: %v", err)
	}
	if o.Tests == "" {
		o.Tests = spectest.TestsFileFor(spec)
	}
	var re *regexp.Regexp
	if o.Run != "" {
		if re, err = regexp.Compile(o.Run); err != nil {
			t.Fatalf("Run %q: %v", o.Run, err)
		}
	}
	specSrc, err := os.ReadFile(spec)
	if err != nil {
		t.Fatalf("read job spec: %v", err)
	}
	testsSrc, err := os.ReadFile(o.Tests)
	if err != nil {
		t.Fatalf("read tests: %v", err)
	}
	s, err := spectest.Load(reg, engine.Defaults{}, spec, specSrc, o.Tests, testsSrc)
	if err != nil {
		t.Fatalf("%v", err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = spectest.DefaultTimeout
	}
	for _, test := range s.Selected(re) {
		t.Run(test.Name, func(t *testing.T) {
			t.Parallel()
			r := s.RunTest(t.Context(), test, timeout)
			if !r.Passed {
				t.Error("\n" + spectest.Explain(r, "  "))
			}
		})
	}
}
