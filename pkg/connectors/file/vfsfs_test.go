package file

import (
	"io/fs"
	"path"

	"github.com/flinkgo/flinkgo/internal/vfs"
)

// vfsFS reads a directory of a vfs.FS as an fs.FS (for WalkDir and the
// verify checker).
type vfsFS struct {
	fsys vfs.FS
	root string
}

func (v vfsFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return v.fsys.Open(path.Join(v.root, name))
}

func (v vfsFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	return v.fsys.ReadDir(path.Join(v.root, name))
}
