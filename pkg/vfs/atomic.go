package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
)

// WriteFileAtomic replaces path with data so that, even across a crash or a
// power loss, path holds either its previous content (or is missing, if it
// was) or data, never a partial file. It writes path+".tmp-<random>", Syncs
// it, Renames it over path and SyncDirs the parent. On any error before the
// rename the temporary file is removed. An error returned after the rename
// (from SyncDir) means path may already hold data but is not yet durable.
// In object storage (Objects) it is one PUT, which is atomic by itself.
func WriteFileAtomic(fsys FS, path string, data []byte) (err error) {
	if obj, ok := Objects(fsys, path); ok {
		return obj.PutObject(path, data, false)
	}
	tmp := fmt.Sprintf("%s.tmp-%016x", path, rand.Uint64())
	renamed := false
	defer func() {
		if err != nil && !renamed {
			_ = fsys.Remove(tmp) // may not exist; the original error wins
		}
	}()
	if err := writeSynced(fsys, tmp, data); err != nil {
		return fmt.Errorf("vfs: write atomic %s: %w", path, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("vfs: write atomic %s: %w", path, err)
	}
	renamed = true
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("vfs: write atomic %s: %w", path, err)
	}
	return nil
}

// writeSynced creates name, writes data, Syncs and Closes it.
func writeSynced(fsys FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// ReadFile returns the whole content of path.
func ReadFile(fsys FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	var data []byte
	if fi, serr := f.Stat(); serr == nil && fi.Size() > 0 {
		// Read into a buffer of the right size: io.ReadAll would grow and
		// copy its way up to large state files.
		data = make([]byte, fi.Size())
		var n int
		n, err = io.ReadFull(f, data)
		data = data[:n]
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = nil // the file shrank meanwhile: return what is there
		}
		if err == nil {
			var rest []byte
			rest, err = io.ReadAll(f) // the file grew meanwhile
			data = append(data, rest...)
		}
	} else {
		data, err = io.ReadAll(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Exists reports whether path exists. Errors other than fs.ErrNotExist are
// returned: the caller cannot tell either way.
func Exists(fsys FS, path string) (bool, error) {
	_, err := fsys.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}
