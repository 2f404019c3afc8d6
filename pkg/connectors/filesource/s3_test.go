package filesource

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// The source reads s3:// prefixes from a real S3 server (versitygw): a
// snapshot taken part way through and restored at another parallelism
// reads every record once (the restored file resumes with a ranged GET).
func TestS3ReadAndRestore(t *testing.T) {
	srv := s3test.Start(t)
	bucket := s3test.Bucket(t, srv)
	fsys := vfs.Mux(vfs.NewMem(), s3test.FS(t, srv, s3store.Options{}))
	root := "s3://" + bucket + "/in"
	var want []string
	for f := range 5 {
		var b strings.Builder
		for i := range 300 {
			v := fmt.Sprintf(`{"f":%d,"i":%d}`, f, i)
			want = append(want, v)
			b.WriteString(v + "\n")
		}
		name := fmt.Sprintf("%s/day=%d/part-%d.jsonl", root, f%2, f)
		writeFile(t, fsys, name, b.String())
	}
	writeFile(t, fsys, root+"/_SUCCESS", "")
	first := openSubtasks(t, fsys, jsonSettings(root), 2, nil)
	var got [][]string
	for i, s := range first {
		v, _ := poll(t, s, 250*(i+1), 100)
		got = append(got, v)
	}
	for _, s := range openSubtasks(t, fsys, jsonSettings(root), 3, snapshot(t, first)) {
		v, ended := poll(t, s, 1<<20, 512)
		require.True(t, ended)
		got = append(got, v)
	}
	requireEachOnce(t, want, got...)

	// A prefix without objects: empty under monitor, missing when bounded.
	empty := "s3://" + bucket + "/none"
	require.ErrorContains(t, openSubtasks(t, fsys, jsonSettings(empty), 1, nil)[0].Poll(runtime.NewBatch()), "does not exist")
	mon := jsonSettings(empty)
	mon.monitor = time.Hour
	require.NoError(t, openSubtasks(t, fsys, mon, 1, nil)[0].Poll(runtime.NewBatch()))
}
