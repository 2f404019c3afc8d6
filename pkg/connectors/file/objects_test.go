package file

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// s3Writer is a Writer of one subtask into dir on a real S3 server.
func s3Writer(fsys vfs.FS, dir string) *writer {
	return newWriter(fsys, config{Dir: dir, Subtask: 0, Parallelism: 1, Policy: policy{MaxPartSize: 1 << 40, RolloverInterval: time.Hour, InactivityInterval: time.Hour}},
		zerolog.Nop(), nil)
}

// writeLines writes n lines of the form "<prefix>-<i>" (~1 KiB each).
func writeLines(t *testing.T, w *writer, prefix string, from, n int) []byte {
	var want bytes.Buffer
	pad := bytes.Repeat([]byte("x"), 1000)
	now := time.Now()
	for i := from; i < from+n; i++ {
		v := []byte(fmt.Sprintf("%s-%06d-%s", prefix, i, pad))
		require.NoError(t, w.Write("", &runtime.Record{Value: v}, now))
		want.Write(v)
		want.WriteByte('\n')
	}
	return want.Bytes()
}

// TestObjectWriterOnS3 drives the multipart-upload part files against
// versitygw (which enforces the 5 MiB part minimum): parts go up while
// data arrives, nothing is visible before the commit, the commit makes
// the object, a restore of the in-progress snapshot after the part was
// committed takes it back and continues it, a second commit of the same
// pending part is recognised, and an orphan upload is aborted.
func TestObjectWriterOnS3(t *testing.T) {
	srv := s3test.Start(t)
	obj := s3test.FS(t, srv, s3store.Options{})
	fsys := vfs.Mux(vfs.Default, obj)
	dir := vfs.ObjectURL(s3test.Bucket(t, srv), "out")

	w := s3Writer(fsys, dir)
	require.NoError(t, w.Start())
	want := writeLines(t, w, "a", 0, 12000) // ~12 MiB: two parts and a tail
	snap1, err := w.PreCommit(1, time.Now())
	require.NoError(t, err)
	require.Len(t, snap1.InProgress, 1)
	r := snap1.InProgress[0]
	require.NotEmpty(t, r.Upload)
	require.Len(t, r.Parts, 2, "5 MiB parts uploaded as data arrived")
	require.Less(t, len(r.Tail), vfs.MinPartSize)
	require.EqualValues(t, len(want), r.Length)
	objs, err := obj.ListObjects(dir)
	require.NoError(t, err)
	require.Empty(t, objs, "nothing visible before a commit")

	more := writeLines(t, w, "b", 0, 3000)
	require.NoError(t, w.FinishAll())
	snap2, err := w.PreCommit(2, time.Now())
	require.NoError(t, err)
	require.Len(t, snap2.Pending, 1)
	require.NoError(t, w.Commit(2))
	require.NoError(t, w.Close())
	final := vfs.Join(dir, "part-0-0")
	got, err := obj.ReadObject(final)
	require.NoError(t, err)
	require.Equal(t, append(append([]byte{}, want...), more...), got)

	// Re-committing the pending part (a restore of snapshot 2) is a no-op.
	w2 := s3Writer(fsys, dir)
	require.NoError(t, w2.Restore(restored{Pending: snap2.Pending, Counters: []counters{snap2.Counters}}, time.Now()))
	require.NoError(t, w2.Close())

	// An orphan: an upload of an owned part name nobody refers to.
	orphan := vfs.Join(dir, "part-0-7")
	_, err = obj.CreateUpload(orphan)
	require.NoError(t, err)

	// Restoring snapshot 1 (the part in progress) after it was committed:
	// the committed object is taken back, its recorded parts copied into
	// a new upload, the tail resumed; what follows is written anew.
	w3 := s3Writer(fsys, dir)
	require.NoError(t, w3.Restore(restored{InProgress: snap1.InProgress, Counters: []counters{snap1.Counters}}, time.Now()))
	_, err = obj.HeadObject(final)
	require.Error(t, err, "the object committed after the snapshot was taken back")
	ups, err := obj.ListUploads(dir)
	require.NoError(t, err)
	require.Len(t, ups, 1, "the orphan was aborted, the copy is the only upload: %v", ups)
	again := writeLines(t, w3, "c", 0, 100)
	require.NoError(t, w3.FinishAll())
	_, err = w3.PreCommit(3, time.Now())
	require.NoError(t, err)
	require.NoError(t, w3.Commit(3))
	require.NoError(t, w3.Close())
	got, err = obj.ReadObject(final)
	require.NoError(t, err)
	require.Equal(t, append(append([]byte{}, want...), again...), got)
}
