// Package vfs is the filesystem interface through which all checkpoint,
// state and sink disk I/O in flinkgo goes.
//
// Production code uses Default (the operating system). Tests use MemFS, an
// in-memory filesystem that can simulate a process crash or a power loss
// (CrashClone), wrapped by WithFaults, Count, CrashAt or WithLog to inject
// errors, count operations or crash at a chosen operation.
//
// Durability contract (the same one a POSIX filesystem gives): file data is
// durable after File.Sync; a directory entry (a creation, rename, removal or
// hard link) is durable after SyncDir of the directory that holds it. Code
// that publishes a file must therefore write, Sync, Rename and SyncDir the
// parent; WriteFileAtomic does exactly that.
package vfs

import (
	"io"
	"os"
)

// File is an open file returned by an FS. It is not safe for concurrent use
// unless its FS says so. Errors wrap *os.PathError like *os.File's do.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Seeker
	io.Closer

	// Sync makes the file's current data durable (fsync). Data written
	// since the last Sync is lost on a power loss.
	Sync() error
	// Stat describes the open file.
	Stat() (os.FileInfo, error)
	// Truncate changes the file's size; like a write it is durable only
	// after Sync.
	Truncate(size int64) error
}

// FS is a filesystem. Every method blocks until the operation is done and
// returns errors that satisfy errors.Is(err, fs.ErrNotExist) or
// errors.Is(err, fs.ErrExist) the way the os package's do (*os.PathError,
// *os.LinkError). Implementations are safe for concurrent use.
type FS interface {
	// Create creates name, or truncates it if it exists, and opens it
	// read-write. The new directory entry is durable only after SyncDir of
	// the parent.
	Create(name string) (File, error)
	// Open opens an existing file (or directory) read-only.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file read-write at offset 0; the
	// caller Seeks. It fails with fs.ErrNotExist if name is missing.
	OpenReadWrite(name string) (File, error)
	// Rename atomically replaces newname with oldname, like os.Rename. It
	// is durable only after SyncDir of both parent directories.
	Rename(oldname, newname string) error
	// Link creates newname as a hard link to oldname, like os.Link; it
	// fails with fs.ErrExist if newname exists.
	Link(oldname, newname string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes name and everything under it; a missing name is
	// not an error.
	RemoveAll(name string) error
	// MkdirAll creates dir and any missing parents, like os.MkdirAll.
	MkdirAll(dir string, perm os.FileMode) error
	// Stat describes name.
	Stat(name string) (os.FileInfo, error)
	// ReadDir lists dir sorted by name, like os.ReadDir.
	ReadDir(dir string) ([]os.DirEntry, error)
	// SyncDir makes the entries of dir (creations, renames, removals,
	// links) durable.
	SyncDir(dir string) error
}
