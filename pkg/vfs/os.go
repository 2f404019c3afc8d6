package vfs

import (
	"os"
	"syscall"
)

// Default is the operating system's filesystem. Its files are *os.File.
// An object URL (s3://…) given to it fails with an error saying no object
// store is configured, rather than naming a local directory "s3:" (Mux
// gives such paths to an ObjectFS).
var Default FS = &muxFS{local: osFS{}}

type osFS struct{}

func (osFS) Create(name string) (File, error) { return wrapOSFile(os.Create(name)) }

// Open opens read-only with O_NONBLOCK, which changes nothing for files and
// directories but keeps the open of a FIFO planted where a snapshot file
// is expected from blocking until some writer appears; readers check the
// opened file's type (File.Stat) before reading.
func (osFS) Open(name string) (File, error) {
	return wrapOSFile(os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0))
}

func (osFS) OpenReadWrite(name string) (File, error) {
	return wrapOSFile(os.OpenFile(name, os.O_RDWR, 0))
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) RemoveAll(name string) error { return os.RemoveAll(name) }

func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

func (osFS) ReadDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }

// SyncDir opens dir and fsyncs it.
func (osFS) SyncDir(dir string) error { return syncOpened(os.Open(dir)) }

// syncOpened fsyncs and closes a directory just opened.
func syncOpened(d *os.File, err error) error {
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return err
	}
	return d.Close()
}

// wrapOSFile avoids returning a non-nil File holding a nil *os.File.
func wrapOSFile(f *os.File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}
