package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/spectest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newTestCmd(g *globals) *cobra.Command {
	var testsFile, run string
	var timeout time.Duration
	var parallel int
	cmd := &cobra.Command{
		Use:   "test JOB.yaml... [--tests FILE]",
		Short: "Run a job spec's unit tests (JOB_test.yaml beside it) in-process, without a daemon; exit 1 if one fails",
		Example: `  flinkgo test configs/jobs/top-item.yaml
  flinkgo test configs/jobs/*_test.yaml --run 'late'`,
		Long: `Run the tests of each job spec: JOB_test.yaml beside JOB.yaml, or --tests FILE (a
_test.yaml argument names its spec, JOB.yaml beside it). Each test feeds
records to the job's sources and compares what its sinks receive with what it
expects; the sources and sinks are replaced by in-memory ones, and every
operator between them runs unchanged, with the same event time and state.
Tests run in parallel, in this process: no daemon, no broker. One line per
test (PASS or FAIL, its time), and for a failure the rows missing,
unexpected or changed. Exit 1 when a test fails, 3 when a spec or tests file
is invalid (every problem at its line and column), 4 when a tests file is
missing. The file's shape: docs/testing-jobs.md.`,
		Args: func(cmd *cobra.Command, a []string) error {
			if testsFile != "" && len(a) > 1 {
				return api.Errorf(api.CodeUsage, "--tests names the tests of one job spec; give one JOB.yaml with it, or drop --tests to take each spec's JOB_test.yaml")
			}
			return args(1, -1)(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			var re *regexp.Regexp
			if run != "" {
				var err error
				if re, err = regexp.Compile(run); err != nil {
					return api.Errorf(api.CodeUsage, "--run %q is not a regular expression: %v", run, err)
				}
			}
			suites, err := loadSuites(g, a, testsFile)
			if err != nil {
				return err
			}
			return runSuites(cmd, g, suites, spectest.Options{Run: re, Timeout: timeout, Parallel: parallel})
		},
	}
	cmd.Flags().StringVar(&testsFile, "tests", "", "the tests file (default: JOB_test.yaml beside JOB.yaml)")
	cmd.Flags().StringVar(&run, "run", "", "run only the tests whose name matches this regular expression")
	cmd.Flags().DurationVar(&timeout, "timeout", spectest.DefaultTimeout, "fail a test whose job has not finished after this long")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "tests run at once (default: the number of CPUs)")
	return cmd
}

// loadSuites reads every spec and its tests file; any problem refuses the
// whole run (nothing runs), with every problem of every file.
func loadSuites(g *globals, args []string, testsFile string) ([]*spectest.Suite, error) {
	type pair struct{ spec, tests string }
	var pairs []pair
	seen := map[pair]bool{}
	for _, arg := range args {
		p := pair{spec: arg, tests: testsFile}
		if spec, ok := spectest.SpecFileFor(arg, spectest.FileExists); ok && testsFile == "" {
			p = pair{spec: spec, tests: arg}
		} else if p.tests == "" {
			p.tests = spectest.TestsFileFor(arg)
		}
		if !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
	}
	all := api.SpecError{}
	missing := 0
	var suites []*spectest.Suite
	for _, p := range pairs {
		spec, err := readSpec(p.spec)
		if err != nil {
			all.Errors = append(all.Errors, api.FieldError{File: p.spec, Msg: err.Error()})
			if api.CodeOf(err) == api.CodeNotFound {
				missing++
			}
			continue
		}
		tests, err := os.ReadFile(p.tests)
		if errors.Is(err, fs.ErrNotExist) {
			all.Errors = append(all.Errors, api.FieldError{File: p.tests, Msg: fmt.Sprintf("no tests for %s: write %s beside it (docs/testing-jobs.md), or name the file with --tests", p.spec, p.tests)})
			missing++
			continue
		} else if err != nil {
			all.Errors = append(all.Errors, api.FieldError{File: p.tests, Msg: fmt.Sprintf("read tests: %v", err)})
			continue
		}
		s, err := spectest.Load(g.types, g.defaults(), p.spec, spec, p.tests, tests)
		var se *api.SpecError
		switch {
		case errors.As(err, &se):
			all.Errors = append(all.Errors, se.Errors...)
		case err != nil:
			all.Errors = append(all.Errors, api.FieldError{File: p.tests, Msg: err.Error()})
		default:
			suites = append(suites, s)
		}
	}
	if len(all.Errors) > 0 && len(all.Errors) == missing {
		return nil, &api.Error{Code: api.CodeNotFound, Message: all.Error(), Details: all.Errors}
	}
	if len(all.Errors) > 0 {
		return nil, api.Invalid(&all)
	}
	return suites, nil
}

// suiteReport is a spec's results in -o json.
type suiteReport struct {
	Spec       string            `json:"spec"`
	Tests      string            `json:"tests"`
	Passed     int               `json:"passed"`
	Failed     int               `json:"failed"`
	DurationMs float64           `json:"durationMs"`
	Results    []spectest.Result `json:"results"`
}

func runSuites(cmd *cobra.Command, g *globals, suites []*spectest.Suite, o spectest.Options) error {
	w := cmd.OutOrStdout()
	var reports []suiteReport
	passed, failed := 0, 0
	for _, s := range suites {
		start := time.Now()
		if !g.json() {
			o.OnResult = func(r spectest.Result) { spectest.WriteResult(w, r) }
		}
		results := s.Run(cmd.Context(), o)
		r := suiteReport{Spec: s.SpecFile, Tests: s.TestsFile, Results: results,
			DurationMs: float64(time.Since(start).Microseconds()) / 1000}
		for _, res := range results {
			if res.Passed {
				r.Passed++
			} else {
				r.Failed++
			}
		}
		passed, failed = passed+r.Passed, failed+r.Failed
		reports = append(reports, r)
		if !g.json() {
			writeSuiteLine(w, r)
		}
	}
	if g.json() {
		_ = printJSON(w, map[string]any{"files": reports, "passed": passed, "failed": failed})
	}
	if passed+failed == 0 && o.Run != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: no test matches --run %q\n", o.Run)
	}
	if failed > 0 {
		return api.Errorf(api.CodeFailed, "%d of %d %s failed", failed, passed+failed, pluralWord(passed+failed, "test"))
	}
	return nil
}

func writeSuiteLine(w io.Writer, r suiteReport) {
	status, what := "ok  ", fmt.Sprintf("%d %s passed", r.Passed, pluralWord(r.Passed, "test"))
	if r.Failed > 0 {
		status, what = "FAIL", fmt.Sprintf("%d of %d %s failed", r.Failed, r.Passed+r.Failed, pluralWord(r.Passed+r.Failed, "test"))
	}
	fmt.Fprintf(w, "%s %s  %s  %.0fms\n", status, r.Spec, what, r.DurationMs)
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
