// Package pebblefs adapts flinkgo's pkg/vfs to pebble's vfs.FS, so a pebble
// DB's files go through the same file systems as everything else: the
// operating system in production, and in tests vfs.MemFS with its crash
// and power-loss clones, fault injection and crash points.
//
// The adapter keeps pebble's durability calls as they are: File.Sync and
// its variants become vfs File.Sync, and syncing a directory opened with
// OpenDir becomes vfs FS.SyncDir, so what a crash clone keeps is what
// pebble made durable.
package pebblefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	pvfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// New returns fsys as a pebble file system.
func New(fsys vfs.FS) pvfs.FS { return &adapter{fs: fsys} }

type adapter struct {
	fs vfs.FS
}

var _ pvfs.FS = (*adapter)(nil)

// Create removes name first, as pebble's contract asks (a new inode, so a
// hard link to the old file keeps the old contents).
func (a *adapter) Create(name string, _ pvfs.DiskWriteCategory) (pvfs.File, error) {
	if err := a.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := a.fs.Create(name)
	return wrap(f, err)
}

func (a *adapter) Link(oldname, newname string) error { return a.fs.Link(oldname, newname) }

func (a *adapter) Open(name string, opts ...pvfs.OpenOption) (pvfs.File, error) {
	pf, err := wrap(a.fs.Open(name))
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o.Apply(pf)
	}
	return pf, nil
}

func (a *adapter) OpenReadWrite(name string, _ pvfs.DiskWriteCategory, opts ...pvfs.OpenOption) (pvfs.File, error) {
	pf, err := wrap(a.fs.OpenReadWrite(name))
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o.Apply(pf)
	}
	return pf, nil
}

// OpenDir returns a handle whose Sync makes the directory's entries
// durable (vfs SyncDir).
func (a *adapter) OpenDir(name string) (pvfs.File, error) {
	st, err := a.fs.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &os.PathError{Op: "opendir", Path: name, Err: fmt.Errorf("not a directory")}
	}
	return &dirFile{fs: a.fs, name: name}, nil
}

func (a *adapter) Remove(name string) error    { return a.fs.Remove(name) }
func (a *adapter) RemoveAll(name string) error { return a.fs.RemoveAll(name) }

func (a *adapter) Rename(oldname, newname string) error { return a.fs.Rename(oldname, newname) }

func (a *adapter) ReuseForWrite(oldname, newname string, _ pvfs.DiskWriteCategory) (pvfs.File, error) {
	if err := a.fs.Rename(oldname, newname); err != nil {
		return nil, err
	}
	return wrap(a.fs.OpenReadWrite(newname))
}

func (a *adapter) MkdirAll(dir string, perm os.FileMode) error { return a.fs.MkdirAll(dir, perm) }

// locks holds the names locked in this process. A DB's directory is its
// subtask attempt's alone (docs/state-backends.md), so the lock only
// guards against a second Open in the same process, which is a bug.
var locks sync.Map

func (a *adapter) Lock(name string) (io.Closer, error) {
	key := lockKey{fs: a.fs, name: filepath.Clean(name)}
	if _, held := locks.LoadOrStore(key, true); held {
		return nil, fmt.Errorf("pebblefs: %s is locked by another DB of this process", name)
	}
	// Pebble expects the lock file to exist, as flock creates it.
	if _, err := a.fs.Stat(name); errors.Is(err, fs.ErrNotExist) {
		f, err := a.fs.Create(name)
		if err != nil {
			locks.Delete(key)
			return nil, err
		}
		_ = f.Close()
	}
	return &unlocker{key: key}, nil
}

type lockKey struct {
	fs   vfs.FS
	name string
}

type unlocker struct {
	key  lockKey
	once sync.Once
}

func (u *unlocker) Close() error {
	u.once.Do(func() { locks.Delete(u.key) })
	return nil
}

func (a *adapter) List(dir string) ([]string, error) {
	es, err := a.fs.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name()
	}
	return out, nil
}

func (a *adapter) Stat(name string) (pvfs.FileInfo, error) {
	st, err := a.fs.Stat(name)
	if err != nil {
		return nil, err
	}
	return fileInfo{st}, nil
}

func (a *adapter) PathBase(path string) string    { return filepath.Base(path) }
func (a *adapter) PathJoin(elem ...string) string { return filepath.Join(elem...) }
func (a *adapter) PathDir(path string) string     { return filepath.Dir(path) }
func (a *adapter) Unwrap() pvfs.FS                { return nil }
func (a *adapter) GetDiskUsage(string) (pvfs.DiskUsage, error) {
	return pvfs.DiskUsage{}, errors.ErrUnsupported
}

// fileInfo gives a vfs FileInfo the device id pebble asks for (one
// device: pebble uses it only to tell devices apart).
type fileInfo struct{ os.FileInfo }

func (fileInfo) DeviceID() pvfs.DeviceID { return pvfs.DeviceID{} }

func wrap(f vfs.File, err error) (pvfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &file{f: f}, nil
}

// file is a vfs File as a pebble File. Pebble reads a file with ReadAt
// from several goroutines at once while it may write it; vfs files are
// safe for that use where their FS says so (MemFS and the OS are).
type file struct {
	f vfs.File
}

func (f *file) Close() error                { return f.f.Close() }
func (f *file) Read(p []byte) (int, error)  { return f.f.Read(p) }
func (f *file) Write(p []byte) (int, error) { return f.f.Write(p) }
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	return f.f.ReadAt(p, off)
}

// WriteAt is used by pebble only for files it opened read-write for a
// shared cache, which flinkgo does not configure.
func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if w, ok := f.f.(io.WriterAt); ok {
		return w.WriteAt(p, off)
	}
	return 0, fmt.Errorf("pebblefs: WriteAt is not supported by this file system")
}

func (f *file) Preallocate(int64, int64) error { return nil }
func (f *file) Stat() (pvfs.FileInfo, error) {
	st, err := f.f.Stat()
	if err != nil {
		return nil, err
	}
	return fileInfo{st}, nil
}
func (f *file) Sync() error { return f.f.Sync() }

// SyncTo syncs the whole file: the vfs has no partial sync.
func (f *file) SyncTo(int64) (bool, error)  { return true, f.f.Sync() }
func (f *file) SyncData() error             { return f.f.Sync() }
func (f *file) Prefetch(int64, int64) error { return nil }
func (f *file) Fd() uintptr                 { return pvfs.InvalidFd }

// dirFile is a directory opened for Sync.
type dirFile struct {
	fs   vfs.FS
	name string
}

func (d *dirFile) Close() error { return nil }
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &os.PathError{Op: "read", Path: d.name, Err: fmt.Errorf("is a directory")}
}
func (d *dirFile) ReadAt([]byte, int64) (int, error) { return d.Read(nil) }
func (d *dirFile) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: d.name, Err: fmt.Errorf("is a directory")}
}
func (d *dirFile) WriteAt([]byte, int64) (int, error) { return d.Write(nil) }
func (d *dirFile) Preallocate(int64, int64) error     { return nil }
func (d *dirFile) Stat() (pvfs.FileInfo, error) {
	st, err := d.fs.Stat(d.name)
	return wrapInfo(st, err)
}
func (d *dirFile) Sync() error                 { return d.fs.SyncDir(d.name) }
func (d *dirFile) SyncTo(int64) (bool, error)  { return false, nil }
func (d *dirFile) SyncData() error             { return d.Sync() }
func (d *dirFile) Prefetch(int64, int64) error { return nil }
func (d *dirFile) Fd() uintptr                 { return pvfs.InvalidFd }

func wrapInfo(st os.FileInfo, err error) (pvfs.FileInfo, error) {
	if err != nil {
		return nil, err
	}
	return fileInfo{st}, nil
}
