package eocheck

import (
	"io/fs"
	"path"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// FS returns the directory dir of fsys (a vfs.MemFS, say) as a read-only
// io/fs.FS, for Check.
func FS(fsys vfs.FS, dir string) fs.FS { return vfsFS{fsys: fsys, root: dir} }

type vfsFS struct {
	fsys vfs.FS
	root string
}

var (
	_ fs.ReadDirFS = vfsFS{}
	_ fs.StatFS    = vfsFS{}
)

func (v vfsFS) path(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return path.Join(v.root, name), nil
}

func (v vfsFS) Open(name string) (fs.File, error) {
	p, err := v.path("open", name)
	if err != nil {
		return nil, err
	}
	return v.fsys.Open(p)
}

func (v vfsFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := v.path("readdir", name)
	if err != nil {
		return nil, err
	}
	return v.fsys.ReadDir(p)
}

func (v vfsFS) Stat(name string) (fs.FileInfo, error) {
	p, err := v.path("stat", name)
	if err != nil {
		return nil, err
	}
	return v.fsys.Stat(p)
}
