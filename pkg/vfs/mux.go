package vfs

import (
	"os"
	"time"
)

// Mux returns an FS that hands object URLs (s3://…) to objects and every
// other path to local, so one FS serves a job whose checkpoints, savepoints
// and output may each be local or in a bucket. objects may be nil: object
// URLs then fail.
func Mux(local FS, objects *ObjectFS) FS { return &muxFS{local: local, obj: objects} }

type muxFS struct {
	local FS
	obj   *ObjectFS
}

// Objects returns the ObjectFS through which fsys reaches p: ok when p is
// an object URL and fsys is an ObjectFS or a Mux with one. Code that
// publishes with a rename on a disk asks it for the object store's way.
func Objects(fsys FS, p string) (*ObjectFS, bool) {
	if !IsObject(p) {
		return nil, false
	}
	switch f := fsys.(type) {
	case *ObjectFS:
		return f, true
	case *muxFS:
		return f.obj, f.obj != nil
	}
	return nil, false
}

// Metered returns fsys with the requests it makes to an object store also
// counted in m and ended by deadline (zero: none); an FS without one is
// returned as it is.
func Metered(fsys FS, m *Meter, deadline time.Time) FS {
	switch f := fsys.(type) {
	case *ObjectFS:
		return f.With(m, deadline)
	case *muxFS:
		if f.obj != nil {
			return &muxFS{local: f.local, obj: f.obj.With(m, deadline)}
		}
	}
	return fsys
}

func (m *muxFS) pick(name string) FS {
	if IsObject(name) {
		if m.obj == nil {
			return noObjects{}
		}
		return m.obj
	}
	return m.local
}

func (m *muxFS) Create(name string) (File, error)        { return m.pick(name).Create(name) }
func (m *muxFS) Open(name string) (File, error)          { return m.pick(name).Open(name) }
func (m *muxFS) OpenReadWrite(name string) (File, error) { return m.pick(name).OpenReadWrite(name) }
func (m *muxFS) Remove(name string) error                { return m.pick(name).Remove(name) }
func (m *muxFS) RemoveAll(name string) error             { return m.pick(name).RemoveAll(name) }
func (m *muxFS) MkdirAll(dir string, perm os.FileMode) error {
	return m.pick(dir).MkdirAll(dir, perm)
}
func (m *muxFS) Stat(name string) (os.FileInfo, error)     { return m.pick(name).Stat(name) }
func (m *muxFS) ReadDir(dir string) ([]os.DirEntry, error) { return m.pick(dir).ReadDir(dir) }
func (m *muxFS) SyncDir(dir string) error                  { return m.pick(dir).SyncDir(dir) }

func (m *muxFS) Rename(oldname, newname string) error {
	if IsObject(oldname) || IsObject(newname) {
		return unsupported("rename", oldname)
	}
	return m.local.Rename(oldname, newname)
}

func (m *muxFS) Link(oldname, newname string) error {
	if IsObject(oldname) || IsObject(newname) {
		return unsupported("link", oldname)
	}
	return m.local.Link(oldname, newname)
}

// noObjects answers object URLs when no object store is configured.
type noObjects struct{}

func noStore(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: errNoStore}
}

var errNoStore = errorString("no object store configured for s3:// paths (set s3.endpoint or the AWS environment in the daemon's config)")

type errorString string

func (e errorString) Error() string { return string(e) }

func (noObjects) Create(n string) (File, error)          { return nil, noStore("create", n) }
func (noObjects) Open(n string) (File, error)            { return nil, noStore("open", n) }
func (noObjects) OpenReadWrite(n string) (File, error)   { return nil, noStore("open", n) }
func (noObjects) Rename(o, _ string) error               { return noStore("rename", o) }
func (noObjects) Link(o, _ string) error                 { return noStore("link", o) }
func (noObjects) Remove(n string) error                  { return noStore("remove", n) }
func (noObjects) RemoveAll(n string) error               { return noStore("removeall", n) }
func (noObjects) MkdirAll(n string, _ os.FileMode) error { return noStore("mkdir", n) }
func (noObjects) Stat(n string) (os.FileInfo, error)     { return nil, noStore("stat", n) }
func (noObjects) ReadDir(n string) ([]os.DirEntry, error) {
	return nil, noStore("readdir", n)
}
func (noObjects) SyncDir(n string) error { return noStore("syncdir", n) }
