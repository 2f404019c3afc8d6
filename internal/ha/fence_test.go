package ha

import (
	"errors"
	"io/fs"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func TestFenceRefusesWritesOnceInvalid(t *testing.T) {
	mem := vfs.NewMem()
	var ok atomic.Bool
	ok.Store(true)
	fsys := Fence(mem, ok.Load)
	require.NoError(t, fsys.MkdirAll("/d", 0o700))
	f, err := fsys.Create("/d/a")
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.NoError(t, err)

	ok.Store(false)
	_, err = f.Write([]byte("y"))
	require.ErrorIs(t, err, ErrFenced, "a file opened before the deadline is fenced too")
	require.ErrorIs(t, f.Sync(), ErrFenced)
	require.NoError(t, f.Close())
	for name, op := range map[string]func() error{
		"create": func() error { _, err := fsys.Create("/d/b"); return err },
		"rename": func() error { return fsys.Rename("/d/a", "/d/c") },
		"remove": func() error { return fsys.Remove("/d/a") },
		"mkdir":  func() error { return fsys.MkdirAll("/e", 0o700) },
		"sync":   func() error { return fsys.SyncDir("/d") },
	} {
		require.True(t, errors.Is(op(), ErrFenced), name)
	}
	data, err := vfs.ReadFile(fsys, "/d/a")
	require.NoError(t, err, "reads go on")
	require.Equal(t, "x", string(data))
}

// On object storage the fence works per request and _metadata stays
// create-if-absent through it: a zombie whose check passed just before its
// deadline (the window) cannot replace the new owner's _metadata, and one
// past its deadline sends nothing.
func TestFenceOnObjectStorageKeepsMetadataCreateIfAbsent(t *testing.T) {
	store := vfs.NewObjectFS(vfs.FileStore(vfs.NewMem(), "/s3"), vfs.ObjectOptions{})
	shared := vfs.Mux(vfs.NewMem(), store)
	var zombieValid atomic.Bool
	zombieValid.Store(true)
	owner := Fence(shared, func() bool { return true })
	zombie := Fence(shared, zombieValid.Load)
	dir := "s3://b/checkpoints/job/chk-6"

	mine := &checkpoint.Metadata{JobID: "job", CheckpointID: 6, Kind: "checkpoint", Spec: "owner"}
	require.NoError(t, checkpoint.PublishMetadata(owner, dir, mine))
	late := &checkpoint.Metadata{JobID: "job", CheckpointID: 6, Kind: "checkpoint", Spec: "zombie"}
	require.ErrorIs(t, checkpoint.PublishMetadata(zombie, dir, late), checkpoint.ErrMetadataTaken,
		"a write that passed the fence still cannot replace the owner's _metadata")
	zombieValid.Store(false)
	require.ErrorIs(t, checkpoint.PublishMetadata(zombie, "s3://b/checkpoints/job/chk-7", late), ErrFenced)
	_, err := zombie.Stat("s3://b/checkpoints/job/chk-7/" + checkpoint.MetadataFile)
	require.ErrorIs(t, err, fs.ErrNotExist)

	want, err := checkpoint.EncodeMetadata(mine)
	require.NoError(t, err)
	there, err := store.ReadObject(dir + "/" + checkpoint.MetadataFile)
	require.NoError(t, err)
	require.Equal(t, want, there, "the owner's _metadata stands")
}
