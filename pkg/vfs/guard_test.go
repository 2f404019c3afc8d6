package vfs_test

import (
	"errors"
	"io/fs"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

var errGone = errors.New("gone")

// A guarded Mux refuses changes on both sides once refuse says so, stays an
// FS that Objects sees through (so the object store's create-if-absent and
// multipart ways still apply), and counts no refused request.
func TestGuardedRefusesChangesOnDiskAndInObjects(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st, bucket := open(t)
			var closed atomic.Bool
			var m vfs.Meter
			local := vfs.NewMem()
			g := vfs.Guarded(vfs.Metered(vfs.Mux(local, vfs.NewObjectFS(st, vfs.ObjectOptions{})), &m, time.Time{}), func() error {
				if closed.Load() {
					return errGone
				}
				return nil
			})
			dir := "s3://" + bucket + "/job"
			obj, ok := vfs.Objects(g, dir)
			require.True(t, ok, "a guarded Mux still reaches its object store")
			require.NoError(t, obj.PutObject(dir+"/_metadata", []byte("first"), true))
			require.ErrorIs(t, obj.PutObject(dir+"/_metadata", []byte("second"), true), fs.ErrExist, "create-if-absent still holds")
			require.NoError(t, put(g, dir+"/a", []byte("a")))
			require.NoError(t, put(g, "/local", []byte("l")))
			up, err := obj.CreateUpload(dir + "/part")
			require.NoError(t, err)

			closed.Store(true)
			before := m.Stats().Requests
			require.ErrorIs(t, obj.PutObject(dir+"/b", []byte("b"), false), errGone)
			require.ErrorIs(t, obj.PutObject(dir+"/_metadata2", []byte("x"), true), errGone)
			require.ErrorIs(t, put(g, dir+"/c", []byte("c")), errGone, "an object written through Create is refused at its upload")
			require.ErrorIs(t, g.Remove(dir+"/a"), errGone)
			_, err = obj.UploadPart(dir+"/part", up, 1, []byte("p"))
			require.ErrorIs(t, err, errGone)
			require.ErrorIs(t, obj.CompleteUpload(dir+"/part", up, nil), errGone)
			require.ErrorIs(t, obj.AbortUpload(dir+"/part", up), errGone)
			_, err = obj.CreateUpload(dir + "/other")
			require.ErrorIs(t, err, errGone)
			require.ErrorIs(t, obj.CopyObject(dir+"/a", dir+"/copy"), errGone)
			require.ErrorIs(t, put(g, "/local2", []byte("l")), errGone)
			require.ErrorIs(t, g.Remove("/local"), errGone)
			require.Equal(t, before, m.Stats().Requests, "refused requests are not sent, so not counted")
			require.ErrorIs(t, g.RemoveAll(dir), errGone, "RemoveAll lists (a read), then its DELETE is refused")

			data, err := vfs.ReadFile(g, dir+"/a")
			require.NoError(t, err, "reads go on")
			require.Equal(t, "a", string(data))
			data, err = obj.ReadObject(dir + "/_metadata")
			require.NoError(t, err)
			require.Equal(t, "first", string(data))
			_, err = g.Stat(dir + "/c")
			require.ErrorIs(t, err, fs.ErrNotExist, "nothing of the refused object reached the store")
			data, err = vfs.ReadFile(g, "/local")
			require.NoError(t, err)
			require.Equal(t, "l", string(data))
			closed.Store(false)
			require.NoError(t, obj.AbortUpload(dir+"/part", up))
		})
	}
}

// put writes a whole file through fsys, returning the first error.
func put(fsys vfs.FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
