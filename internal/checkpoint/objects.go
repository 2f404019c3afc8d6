package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Snapshots in object storage (s3://…) keep the layout and the rule of
// completeness of a local disk, but commit without a rename
// (docs/object-storage.md):
//
//   - a state file is written straight under its name: an object appears
//     whole when its upload completes, or not at all;
//   - _metadata is written last, created only if absent (If-None-Match),
//     so two writers can never both complete one snapshot;
//   - disposing deletes _metadata first, then the objects it lists.

// ErrMetadataTaken means a snapshot's _metadata was created by another
// writer: this one did not complete it.
var ErrMetadataTaken = errors.New("_metadata written by another writer")

// writeStateObject uploads a state file; an error leaves no object.
func writeStateObject(fsys vfs.FS, path string, write func(io.Writer) error) error {
	f, err := fsys.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		if a, ok := f.(interface{ Abort() error }); ok {
			_ = a.Abort()
		} else {
			_ = f.Close()
			_ = fsys.Remove(path)
		}
		return err
	}
	return f.Close()
}

// publishMetadataObject creates _metadata if absent. Finding it taken
// with exactly these bytes means an earlier attempt of this very request
// succeeded and its answer was lost (the connection broke after the
// server stored it): the snapshot is complete. Other bytes are another
// writer's: ErrMetadataTaken.
func publishMetadataObject(obj *vfs.ObjectFS, dir string, data []byte) error {
	path := vfs.Join(dir, MetadataFile)
	err := obj.PutObject(path, data, true)
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	there, rerr := obj.ReadObject(path)
	switch {
	case rerr != nil:
		return fmt.Errorf("%s exists and cannot be read back (%v): %w", path, rerr, ErrMetadataTaken)
	case bytes.Equal(there, data):
		return nil
	}
	return fmt.Errorf("%s was created by another writer (a second job or daemon writing the same checkpoint directory?): %w", path, ErrMetadataTaken)
}

// disposeObjects deletes a snapshot in object storage: _metadata first,
// then the state objects it lists, then anything else below dir
// (temporary leftovers). Without a readable _metadata only the last step
// runs.
func disposeObjects(fsys vfs.FS, dir string) error {
	_, m, lerr := Load(fsys, dir)
	if err := fsys.Remove(vfs.Join(dir, MetadataFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if lerr == nil {
		if err := eachStateFile(dir, m, func(path string, _ Handle) error {
			if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return fsys.RemoveAll(dir)
}

// abandonObject turns a stop savepoint's _metadata into AbandonedFile:
// copy, then delete (no rename exists). A crash in between leaves both;
// the pending-stop marker stays until this succeeded, so the next attempt
// repeats it.
func abandonObject(obj *vfs.ObjectFS, dir string) error {
	meta, aband := vfs.Join(dir, MetadataFile), vfs.Join(dir, AbandonedFile)
	if err := obj.CopyObject(meta, aband); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return obj.Remove(meta)
}
