package verify

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// writeOwned writes a directory owned by job since since, with an old
// file (committed before it took the directory) and, when fresh, a file
// it committed.
func writeOwned(t *testing.T, since time.Time, fresh bool) string {
	dir := t.TempDir()
	marker, err := json.Marshal(runtime.OutputOwner{Version: 1, Job: "3f2a1c", JobName: "kafka-to-files", Operator: "files", Since: since})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, runtime.OwnerFile), marker, 0o600))
	old := filepath.Join(dir, "part-0-0")
	require.NoError(t, os.WriteFile(old, []byte(idxLines(1, 5)), 0o600))
	require.NoError(t, os.Chtimes(old, since.Add(-time.Hour), since.Add(-time.Hour)))
	if fresh {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "part-0-1"), []byte(idxLines(6, 9)), 0o600))
	}
	return dir
}

// dev verify names the job whose output it checked, and a directory where
// that job committed nothing does not pass on older files.
func TestVerifyNamesTheOwnerAndWantsItsFiles(t *testing.T) {
	since := time.Now().Add(-time.Minute)
	dir := writeOwned(t, since, true)
	r, err := Run(Options{Path: dir, Field: "idx"})
	require.NoError(t, err)
	require.True(t, r.OK())
	require.Equal(t, 1, r.NewFiles)
	require.NoError(t, r.CheckOwner(dir, ""))
	require.NoError(t, r.CheckOwner(dir, "3f2a1c"))
	require.NoError(t, r.CheckOwner(dir, "kafka-to-files"), "a job's name names it too")
	require.ErrorContains(t, r.CheckOwner(dir, "9e8d7c"), "is the output of job 3f2a1c")
	var text bytes.Buffer
	r.WriteText(&text)
	require.Contains(t, text.String(), `output of job 3f2a1c ("kafka-to-files", operator "files")`)
	require.Contains(t, text.String(), "1 of 2 files committed by it")

	stale := writeOwned(t, since, false)
	r, err = Run(Options{Path: stale, Field: "idx"})
	require.NoError(t, err)
	require.True(t, r.OK(), "the old files alone are consistent")
	require.ErrorContains(t, r.CheckOwner(stale, ""), "job 3f2a1c (\"kafka-to-files\") has committed nothing in "+stale)

	bare := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bare, "part-0-0"), []byte(idxLines(1, 5)), 0o600))
	r, err = Run(Options{Path: bare, Field: "idx"})
	require.NoError(t, err)
	require.NoError(t, r.CheckOwner(bare, ""), "output without a marker: nothing tells which job wrote it")
	require.ErrorContains(t, r.CheckOwner(bare, "3f2a1c"), "has no ownership marker")
}
