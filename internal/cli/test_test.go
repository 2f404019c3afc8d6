package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

// runCLI runs the command line in-process and returns its exit code,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("FLINKGO_HOME", t.TempDir())
	root := NewRoot(all.Registry())
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		WriteError(root, &errb, err)
	}
	return ExitCode(err), out.String(), errb.String()
}

const copySpec = `name: copy
operators:
  - {uid: in, type: kafka, brokers: [b:9092], topic: t}
  - {uid: out, type: print, from: [in]}
`

func writeFiles(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

// flinkgo test: its arguments, --run, -o json, and its exit codes.
func TestTestCommand(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"job.yaml": copySpec,
		"job_test.yaml": `tests:
  - {name: copies, inputs: {in: [{value: a}]}, expect: {out: [a]}}
  - {name: wrong, inputs: {in: [{value: a}]}, expect: {out: [b]}}
`,
		"other.yaml": copySpec,
	})
	job := filepath.Join(dir, "job.yaml")

	code, stdout, stderr := runCLI(t, "test", job, "--run", "^cop")
	assert.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^PASS copies \(.*\)\nok   .*job.yaml  1 test passed  \d+ms\n$`, stdout)

	code, stdout, stderr = runCLI(t, "test", filepath.Join(dir, "job_test.yaml"), "-o", "json")
	assert.Equal(t, 1, code)
	var report struct {
		Files []struct {
			Spec           string
			Passed, Failed int
			Results        []struct {
				Name   string
				Passed bool
				Sinks  []struct {
					Sink       string
					Missing    []struct{ Row string }
					Unexpected []struct{ Row string }
				}
			}
		}
		Passed, Failed int
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &report), stdout)
	assert.Equal(t, job, report.Files[0].Spec, "a tests file names its spec")
	assert.Equal(t, 1, report.Passed)
	assert.Equal(t, 1, report.Failed)
	wrong := report.Files[0].Results[1]
	assert.Equal(t, "wrong", wrong.Name)
	assert.Equal(t, `"b"`, wrong.Sinks[0].Missing[0].Row)
	assert.Equal(t, `"a"`, wrong.Sinks[0].Unexpected[0].Row)
	assert.Contains(t, stderr, `"exitCode": 1`)

	code, _, stderr = runCLI(t, "test", filepath.Join(dir, "other.yaml"))
	assert.Equal(t, 4, code)
	assert.Contains(t, stderr, "no tests for "+filepath.Join(dir, "other.yaml")+": write "+filepath.Join(dir, "other_test.yaml")+" beside it")

	code, _, stderr = runCLI(t, "test", job, filepath.Join(dir, "other.yaml"), "--tests", "x.yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--tests names the tests of one job spec")

	code, _, stderr = runCLI(t, "test", job, "--run", "(")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--run "(" is not a regular expression`)
}

// validate checks a tests file beside its spec as flinkgo test reads it,
// so validate configs/jobs/*.yaml checks both.
func TestValidateChecksTestsFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"job.yaml":      copySpec,
		"job_test.yaml": "tests:\n  - name: x\n    inputs: {nope: []}\n",
		"ok.yaml":       copySpec,
		"ok_test.yaml":  "tests: [{name: x, expect: {out: []}}]\n",
	})
	code, stdout, stderr := runCLI(t, "validate", filepath.Join(dir, "ok.yaml"), filepath.Join(dir, "ok_test.yaml"))
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "ok_test.yaml: valid")

	code, _, stderr = runCLI(t, "validate", filepath.Join(dir, "job_test.yaml"))
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr, `job_test.yaml:3:14: tests[0].inputs.nope: "nope" is not a source of`)
}
