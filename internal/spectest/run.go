package spectest

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	rt "github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// DefaultTimeout is how long a test's job may run before it fails.
const DefaultTimeout = 10 * time.Second

// Options for Run.
type Options struct {
	// Run selects the tests whose name it matches (nil: all).
	Run *regexp.Regexp
	// Timeout bounds each test's job (0: DefaultTimeout).
	Timeout time.Duration
	// Parallel is how many tests run at once (0: GOMAXPROCS).
	Parallel int
	// OnResult, when set, hears each result in the file's order as soon as
	// it and those before it are known.
	OnResult func(Result)
}

// Result is the outcome of one test.
type Result struct {
	Name string `json:"name"`
	// File and Line are where the test is.
	File       string  `json:"file"`
	Line       int     `json:"line"`
	Passed     bool    `json:"passed"`
	DurationMs float64 `json:"durationMs"`
	// Error is why the test failed other than by its sinks' rows: the job
	// failed (or did not fail as error: expects), or did not finish.
	Error string       `json:"error,omitempty"`
	Sinks []SinkResult `json:"sinks"`
}

// Selected returns the tests o.Run selects.
func (s *Suite) Selected(re *regexp.Regexp) []*Test {
	var out []*Test
	for _, t := range s.Tests {
		if re == nil || re.MatchString(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// Run runs the selected tests, o.Parallel at a time, and returns their
// results in the file's order.
func (s *Suite) Run(ctx context.Context, o Options) []Result {
	tests := s.Selected(o.Run)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	results := make([]Result, len(tests))
	done := make([]chan struct{}, len(tests))
	sem := make(chan struct{}, o.Parallel)
	for i, t := range tests {
		done[i] = make(chan struct{})
		go func() {
			defer close(done[i])
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = s.RunTest(ctx, t, o.Timeout)
		}()
	}
	for i := range tests {
		<-done[i]
		if o.OnResult != nil {
			o.OnResult(results[i])
		}
	}
	return results
}

var jobSeq atomic.Int64

// RunTest runs one test: the job with the test's in-memory sources and
// sinks, until it finishes (or fails, or timeout passes), and compares
// what its sinks received.
func (s *Suite) RunTest(ctx context.Context, t *Test, timeout time.Duration) (res Result) {
	start := time.Now()
	res = Result{Name: t.Name, File: s.TestsFile, Line: t.Line, Sinks: []SinkResult{}}
	defer func() { res.DurationMs = float64(time.Since(start).Microseconds()) / 1000 }()
	col := &collector{rows: map[string][]Row{}}
	sources := 0
	delivered := make(chan struct{}, len(s.sources))
	g, err := engine.CompileWith(s.reg, s.SpecFile, s.spec, s.defaults, engine.CompileOptions{
		Substitute: func(op *api.OperatorSpec, def rt.Definition) rt.Definition {
			switch def.Kind {
			case api.KindSource:
				// One subtask holds all the test's records: their order,
				// and each watermark's place among them, is the test's.
				op.Parallelism = 1
				sources++
				return sourceDef(def, s.plans[op.UID], t.inputs[op.UID], t.endOfInput, func() {
					select {
					case delivered <- struct{}{}:
					default:
					}
				})
			case api.KindSink:
				return sinkDef(def, s.plans[op.UID], col)
			}
			return def
		}})
	if err != nil {
		res.Error = fmt.Sprintf("the job with in-memory sources and sinks does not compile: %v", err)
		return res
	}
	// A failure fails the test, with its error: a restart would replay
	// the records into the sinks again.
	g.Restart = api.RestartConfig{Type: api.RestartNone}
	j := engine.StartJob(engine.JobOptions{ID: fmt.Sprintf("test-%d", jobSeq.Add(1)), Graph: g,
		Env: &engine.Env{FS: vfs.NewMem()}, Log: zerolog.Nop(), CheckpointsDir: "/checkpoints", SavepointsDir: "/savepoints"})
	if !t.endOfInput {
		// Without end of input the job stops with a savepoint once every
		// record went in: the barrier follows them through the job, which
		// then finishes without the final watermark.
		go func() {
			for range sources {
				select {
				case <-delivered:
				case <-j.Done():
					return
				}
			}
			_, _, _ = j.Stop("", false)
		}()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-j.Done():
	case <-timer.C:
		res.Error = fmt.Sprintf("the job did not finish within %s (--timeout)", timeout)
	case <-ctx.Done():
		res.Error = "interrupted"
	}
	if res.Error != "" {
		_ = j.Cancel()
		<-j.Done()
		return res
	}
	info := j.Info()
	switch {
	case info.State == api.StateFailed && t.wantError == "":
		res.Error = "the job failed: " + info.Error
	case info.State == api.StateFailed && !strings.Contains(info.Error, t.wantError):
		res.Error = fmt.Sprintf("the job failed with another error than %q (error): %s", t.wantError, info.Error)
	case info.State != api.StateFailed && t.wantError != "":
		res.Error = fmt.Sprintf("the job %s; the test expects it to fail with %q (error)", strings.ToLower(string(info.State)), t.wantError)
	case info.State != api.StateFailed && info.State != api.StateFinished:
		res.Error = fmt.Sprintf("the job ended %s", info.State)
	}
	res.Passed = res.Error == ""
	for _, e := range t.expect {
		sr := compare(e, col.get(e.sink))
		res.Sinks = append(res.Sinks, sr)
		res.Passed = res.Passed && !sr.Failed
	}
	return res
}
