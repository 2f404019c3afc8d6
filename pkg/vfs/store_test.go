package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// stores are the Store implementations the contract runs against: the
// files-backed one (over a MemFS) and a real S3 server (versitygw).
func stores(t *testing.T) map[string]func(t *testing.T) (vfs.Store, string) {
	return map[string]func(t *testing.T) (vfs.Store, string){
		"filestore": func(t *testing.T) (vfs.Store, string) {
			return vfs.FileStore(vfs.NewMem(), "/s3"), "b"
		},
		"versitygw": func(t *testing.T) (vfs.Store, string) {
			srv := s3test.Start(t)
			return s3test.Store(t, srv, s3store.Options{}), s3test.Bucket(t, srv)
		},
	}
}

func get(t *testing.T, st vfs.Store, b, k string, off, n int64) []byte {
	t.Helper()
	r, err := st.Get(context.Background(), b, k, off, n)
	require.NoError(t, err)
	defer r.Close()
	data, err := io.ReadAll(r)
	require.NoError(t, err)
	return data
}

func TestStoreContract(t *testing.T) {
	for name, mk := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st, b := mk(t)
			ctx := context.Background()
			_, err := st.Head(ctx, b, "a/x")
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.NoError(t, st.Put(ctx, b, "a/x", []byte("hello"), false))
			info, err := st.Head(ctx, b, "a/x")
			require.NoError(t, err)
			require.EqualValues(t, 5, info.Size)
			require.Equal(t, "ell", string(get(t, st, b, "a/x", 1, 3)))
			require.Equal(t, "llo", string(get(t, st, b, "a/x", 2, -1)))

			// Create-if-absent: the second writer loses, the object is the first's.
			require.NoError(t, st.Put(ctx, b, "a/m", []byte("one"), true))
			require.ErrorIs(t, st.Put(ctx, b, "a/m", []byte("two"), true), fs.ErrExist)
			require.Equal(t, "one", string(get(t, st, b, "a/m", 0, -1)))

			require.NoError(t, st.Put(ctx, b, "a/d/y", []byte("y"), false))
			objs, prefixes, err := st.List(ctx, b, "a/", "/")
			require.NoError(t, err)
			require.Len(t, objs, 2)
			require.Equal(t, []string{"a/d/"}, prefixes)
			all, _, err := st.List(ctx, b, "a/", "")
			require.NoError(t, err)
			require.Len(t, all, 3)

			require.NoError(t, st.Copy(ctx, b, "a/x", "a/x2"))
			require.Equal(t, "hello", string(get(t, st, b, "a/x2", 0, -1)))
			require.NoError(t, st.Delete(ctx, b, "a/x", "a/x2", "a/missing"))
			_, err = st.Head(ctx, b, "a/x2")
			require.ErrorIs(t, err, fs.ErrNotExist)

			multipart(t, st, b)
		})
	}
}

func multipart(t *testing.T, st vfs.Store, b string) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), vfs.MinPartSize/16+1)
	id, err := st.CreateUpload(ctx, b, "m/obj")
	require.NoError(t, err)
	e1, err := st.UploadPart(ctx, b, "m/obj", id, 1, big)
	require.NoError(t, err)
	e2, err := st.UploadPart(ctx, b, "m/obj", id, 2, []byte("tail"))
	require.NoError(t, err)
	ups, err := st.ListUploads(ctx, b, "m/")
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.Equal(t, id, ups[0].ID)
	parts, err := st.ListParts(ctx, b, "m/obj", id)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	require.EqualValues(t, len(big), parts[0].Size)
	_, err = st.Head(ctx, b, "m/obj")
	require.ErrorIs(t, err, fs.ErrNotExist, "invisible before complete")
	require.NoError(t, st.CompleteUpload(ctx, b, "m/obj", id, []vfs.Part{{Number: 1, ETag: e1}, {Number: 2, ETag: e2}}))
	got := get(t, st, b, "m/obj", 0, -1)
	require.Equal(t, append(append([]byte{}, big...), "tail"...), got)
	err = st.CompleteUpload(ctx, b, "m/obj", id, []vfs.Part{{Number: 1, ETag: e1}, {Number: 2, ETag: e2}})
	// S3 may answer a repeated completion with success (AWS does for a
	// while, versitygw does) or NoSuchUpload: callers accept both.
	require.True(t, err == nil || errors.Is(err, vfs.ErrNoUpload), "completing twice: %v", err)

	// A small part that is not the last is refused.
	id2, err := st.CreateUpload(ctx, b, "m/small")
	require.NoError(t, err)
	s1, err := st.UploadPart(ctx, b, "m/small", id2, 1, []byte("small"))
	require.NoError(t, err)
	s2, err := st.UploadPart(ctx, b, "m/small", id2, 2, []byte("small"))
	require.NoError(t, err)
	require.Error(t, st.CompleteUpload(ctx, b, "m/small", id2, []vfs.Part{{Number: 1, ETag: s1}, {Number: 2, ETag: s2}}))

	// Copying ranges of an object into parts.
	c1, err := st.CopyPart(ctx, b, "m/small", id2, 1, "m/obj", 0, int64(len(big)))
	require.NoError(t, err)
	require.Equal(t, e1, c1, "a copied part has the ETag of the same bytes uploaded")
	c2, err := st.CopyPart(ctx, b, "m/small", id2, 2, "m/obj", int64(len(big)), 4)
	require.NoError(t, err)
	require.NoError(t, st.CompleteUpload(ctx, b, "m/small", id2, []vfs.Part{{Number: 1, ETag: c1}, {Number: 2, ETag: c2}}))
	require.Equal(t, got, get(t, st, b, "m/small", 0, -1))

	id3, err := st.CreateUpload(ctx, b, "m/aborted")
	require.NoError(t, err)
	require.NoError(t, st.AbortUpload(ctx, b, "m/aborted", id3))
	ups, err = st.ListUploads(ctx, b, "m/")
	require.NoError(t, err)
	require.Empty(t, ups)
}

func TestObjectFS(t *testing.T) {
	for name, mk := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st, b := mk(t)
			m := &vfs.Meter{}
			fsys := vfs.Metered(vfs.Mux(vfs.NewMem(), vfs.NewObjectFS(st, vfs.ObjectOptions{})), m, time.Time{})
			root := vfs.ObjectURL(b, "dir")
			_, err := fsys.Stat(root)
			require.ErrorIs(t, err, fs.ErrNotExist)
			entries, err := fsys.ReadDir(root)
			require.NoError(t, err)
			require.Empty(t, entries, "an empty prefix is an empty directory")

			// A small file is one PUT at Close, a large one a multipart upload.
			small := vfs.Join(root, "small")
			f, err := fsys.Create(small)
			require.NoError(t, err)
			_, err = f.Write([]byte("abc"))
			require.NoError(t, err)
			_, err = fsys.Stat(small)
			require.ErrorIs(t, err, fs.ErrNotExist, "nothing visible before Close")
			require.NoError(t, f.Close())
			large := vfs.Join(root, "sub", "large")
			data := bytes.Repeat([]byte("x"), 2*vfs.MinPartSize+7)
			f, err = fsys.Create(large)
			require.NoError(t, err)
			for off := 0; off < len(data); off += 100000 {
				_, err = f.Write(data[off:min(off+100000, len(data))])
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())
			got, err := vfs.ReadFile(fsys, large)
			require.NoError(t, err)
			require.Equal(t, data, got)

			fi, err := fsys.Stat(vfs.Join(root, "sub"))
			require.NoError(t, err)
			require.True(t, fi.IsDir())
			entries, err = fsys.ReadDir(root)
			require.NoError(t, err)
			require.Len(t, entries, 2)
			require.Equal(t, "small", entries[0].Name())
			require.Equal(t, "sub", entries[1].Name())
			require.True(t, entries[1].IsDir())

			require.ErrorIs(t, fsys.Rename(small, small+"2"), errors.ErrUnsupported)
			require.ErrorIs(t, fsys.Link(small, small+"2"), errors.ErrUnsupported)

			obj, ok := vfs.Objects(fsys, small)
			require.True(t, ok)
			require.ErrorIs(t, obj.PutObject(small, []byte("again"), true), fs.ErrExist)

			require.NoError(t, fsys.RemoveAll(root))
			entries, err = fsys.ReadDir(root)
			require.NoError(t, err)
			require.Empty(t, entries)
			require.Positive(t, m.Stats().Requests)
			require.GreaterOrEqual(t, m.Stats().Uploaded, int64(len(data)))
		})
	}
}

func TestObjectPaths(t *testing.T) {
	require.Equal(t, "s3://b/k/x", vfs.Join("s3://b/k", "x"))
	require.Equal(t, "s3://b/k/x", vfs.Join("s3://b/k/", "/x"))
	require.Equal(t, "s3://b/k", vfs.Clean("s3:/b/k/"))
	require.Equal(t, "s3://b", vfs.Dir("s3://b/k"))
	require.Equal(t, "s3://b/k", vfs.Dir("s3://b/k/x"))
	require.Equal(t, "x", vfs.Base("s3://b/k/x"))
	require.Equal(t, "/tmp/x", vfs.Clean("file:///tmp/x/"))
	require.Equal(t, "/tmp/x/y", vfs.Join("file:///tmp/x", "y"))
	require.True(t, vfs.IsAbs("s3://b"))
	require.False(t, vfs.IsAbs("s3://"))
	require.True(t, vfs.IsAbs("file:///tmp"))
	require.False(t, vfs.IsAbs("file://tmp"))
	require.True(t, vfs.Within("s3://b/k/x", "s3://b/k"))
	require.False(t, vfs.Within("s3://b/kx", "s3://b/k"))
	b, k, ok := vfs.SplitObject(vfs.Join("s3://bucket", "a", "..", "b"))
	require.True(t, ok)
	require.Equal(t, "bucket", b)
	require.Equal(t, "b", k)
}
