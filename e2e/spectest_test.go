package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests shipped beside the example jobs (configs/jobs/*_test.yaml)
// pass through the real binary, each file in well under a second (bounded
// loosely here: the binary is built with the race detector and the
// machine is shared; scripts/spectestfigures measures it). A wrong
// expectation exits 1 with the difference; a bad tests file exits 3 at
// its line and column.
func TestFlinkgoTestOnTheShippedExamples(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	files, err := filepath.Glob("../configs/jobs/*_test.yaml")
	require.NoError(t, err)
	for _, dir := range []string{"nexmark", "nexmark-sql"} {
		more, err := filepath.Glob("../configs/jobs/" + dir + "/*_test.yaml")
		require.NoError(t, err)
		files = append(files, more...)
	}
	require.GreaterOrEqual(t, len(files), 10)

	r := e.run(append([]string{"test", "-o", "json"}, files...)...)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var report struct {
		Files []struct {
			Spec           string
			Passed, Failed int
			DurationMs     float64
		}
		Passed, Failed int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report), r.stdout)
	require.Len(t, report.Files, len(files))
	for _, f := range report.Files {
		assert.Positive(t, f.Passed, f.Spec)
		assert.Zero(t, f.Failed, f.Spec)
		assert.Less(t, f.DurationMs, 5000.0, "%s: the tests of one file take milliseconds", f.Spec)
	}

	dir := t.TempDir()
	spec, err := os.ReadFile("../configs/jobs/datagen-print.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job.yaml"), spec, 0o644))
	tests := filepath.Join(dir, "job_test.yaml")
	require.NoError(t, os.WriteFile(tests, []byte(`tests:
  - name: squares
    inputs:
      numbers: [{value: {idx: 2}}, {value: {idx: 3}}]
    expect:
      stdout: [{idx: 2, square: 5}]
`), 0o644))
	r = e.run("test", filepath.Join(dir, "job.yaml"))
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "FAIL squares (")
	assert.Contains(t, r.stdout, "job_test.yaml:6: sink stdout received 1 row:\n")
	assert.Contains(t, r.stdout, "  changed     square: expected 5, received 4  (line 6)\n")
	assert.Contains(t, r.stderr, "error: 1 of 1 test failed")

	require.NoError(t, os.WriteFile(tests, []byte("tests:\n  - name: x\n    inputs: {numbrs: []}\n"), 0o644))
	r = e.run("test", tests)
	assert.Equal(t, 3, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, `job_test.yaml:3:14: tests[0].inputs.numbrs: "numbrs" is not a source of`)
}
