package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// flinkgo runs the CLI in process and returns its stdout and error.
func flinkgo(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := NewRoot(all.Registry())
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// dev verify --path s3://bucket/prefix reads the sink's objects with the
// s3.* keys the daemon reads (here FLINKGO_S3_* and the AWS variables).
func TestDevVerifyReadsObjectStorage(t *testing.T) {
	srv := s3test.Start(t)
	bucket := s3test.Bucket(t, srv)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("FLINKGO_HOME", t.TempDir())
	fsys := s3test.FS(t, srv, s3store.Options{})
	out := "s3://" + bucket + "/out"
	require.NoError(t, runtime.ClaimOutput(fsys, out, runtime.OutputClaim{Job: "3f2a1c", JobName: "s3-job", Operator: "files"}))
	for part, r := range [][2]int{{1, 5}, {6, 9}} {
		var b strings.Builder
		for i := r[0]; i <= r[1]; i++ {
			fmt.Fprintf(&b, "{\"idx\": %d}\n", i)
		}
		require.NoError(t, vfs.WriteFileAtomic(fsys, fmt.Sprintf("%s/part-0-%d", out, part), []byte(b.String())))
	}

	stdout, err := flinkgo(t, "dev", "verify", "--path", out, "--field", "idx", "--job", "3f2a1c")
	require.NoError(t, err, stdout)
	require.Contains(t, stdout, `output of job 3f2a1c ("s3-job", operator "files")`)
	require.Contains(t, stdout, "records 1..9: 9 records in 2 files, 0 gaps, 0 duplicates — OK")

	_, err = flinkgo(t, "dev", "verify", "--path", "s3://"+bucket+"/missing")
	require.Error(t, err)
}

// An empty --job (a script whose JOB=$(flinkgo run …) failed) is an
// error, not "any job".
func TestDevVerifyEmptyJob(t *testing.T) {
	_, err := flinkgo(t, "dev", "verify", "--path", t.TempDir(), "--job", "")
	require.ErrorContains(t, err, "--job is empty")
}
