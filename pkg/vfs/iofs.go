package vfs

import (
	"io/fs"
	"os"
)

// IOFS is the read-only io/fs view of the tree under root in fsys, for
// readers written against io/fs (fs.WalkDir, fs.ReadFile) that must also
// read object storage. Names are slash-separated and relative to root, as
// io/fs wants; the files it opens are fsys's.
func IOFS(fsys FS, root string) fs.FS { return ioFS{fsys: fsys, root: root} }

type ioFS struct {
	fsys FS
	root string
}

func (f ioFS) path(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &os.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return f.root, nil
	}
	return Join(f.root, name), nil
}

// Open opens a file of the tree.
func (f ioFS) Open(name string) (fs.File, error) {
	p, err := f.path(name)
	if err != nil {
		return nil, err
	}
	return f.fsys.Open(p)
}

// ReadDir lists a directory of the tree (fs.ReadDirFS, which fs.WalkDir
// uses).
func (f ioFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := f.path(name)
	if err != nil {
		return nil, err
	}
	return f.fsys.ReadDir(p)
}

// Stat describes a file of the tree (fs.StatFS).
func (f ioFS) Stat(name string) (fs.FileInfo, error) {
	p, err := f.path(name)
	if err != nil {
		return nil, err
	}
	return f.fsys.Stat(p)
}
