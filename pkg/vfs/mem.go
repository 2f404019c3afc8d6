package vfs

import (
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// MemFS is an in-memory FS for tests. Paths use "/" separators, are
// cleaned, and relative paths are taken from the root "/". The root
// directory always exists and is always durable.
//
// MemFS tracks, besides the live state that reads see, the durable state a
// power loss would leave (see CrashClone). It is safe for concurrent use by
// multiple goroutines; one mutex serialises every operation, including
// those on its open files.
type MemFS struct {
	mu   sync.Mutex
	root *inode
}

var _ FS = (*MemFS)(nil)

// NewMem returns an empty MemFS holding only the root directory.
func NewMem() *MemFS { return &MemFS{root: newDirInode(0o755)} }

// Create creates or truncates name and opens it read-write.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	n, ok := dir.children[base]
	switch {
	case !ok:
		n = newFileInode(0o666)
		dir.children[base] = n
		dir.touch()
	case n.dir:
		return nil, pathErr("open", name, syscall.EISDIR)
	default:
		n.resize(0)
	}
	return &memFile{m: m, n: n, name: path.Base(clean(name)), write: true}, nil
}

// Open opens an existing file or directory read-only.
func (m *MemFS) Open(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return &memFile{m: m, n: n, name: path.Base(clean(name))}, nil
}

// OpenReadWrite opens an existing file read-write at offset 0.
func (m *MemFS) OpenReadWrite(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(name)
	if err == nil && n.dir {
		err = syscall.EISDIR
	}
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return &memFile{m: m, n: n, name: path.Base(clean(name)), write: true}, nil
}

// Rename moves the entry oldname to newname, replacing newname if it is a
// file, with the rules of os.Rename on Unix (a directory is never replaced).
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.rename(oldname, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}

func (m *MemFS) rename(oldname, newname string) error {
	odir, obase, err := m.parent(oldname)
	if err != nil {
		return err
	}
	src, ok := odir.children[obase]
	if !ok {
		return syscall.ENOENT
	}
	ndir, nbase, err := m.parent(newname)
	if err != nil {
		return err
	}
	dst := ndir.children[nbase]
	if dst == src {
		return nil // same inode: rename(2) does nothing
	}
	if err := checkReplace(src, dst, clean(oldname), clean(newname)); err != nil {
		return err
	}
	delete(odir.children, obase)
	ndir.children[nbase] = src
	odir.touch()
	ndir.touch()
	return nil
}

// checkReplace reports why src may not be renamed over dst (nil if dst is
// missing), following os.Rename on Unix.
func checkReplace(src, dst *inode, oldpath, newpath string) error {
	switch {
	case src.dir && strings.HasPrefix(newpath, oldpath+"/"):
		return syscall.EINVAL // a directory into its own subtree
	case dst == nil:
		return nil
	case dst.dir:
		return syscall.EEXIST // os.Rename never replaces a directory
	case src.dir:
		return syscall.ENOTDIR
	}
	return nil
}

// Link adds newname as another entry for oldname's inode.
func (m *MemFS) Link(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.link(oldname, newname); err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	return nil
}

func (m *MemFS) link(oldname, newname string) error {
	src, err := m.lookup(oldname)
	if err != nil {
		return err
	}
	if src.dir {
		return syscall.EPERM
	}
	dir, base, err := m.parent(newname)
	if err != nil {
		return err
	}
	if _, ok := dir.children[base]; ok {
		return syscall.EEXIST
	}
	dir.children[base] = src
	dir.touch()
	return nil
}

// Remove removes a file or an empty directory.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent(name)
	if err != nil {
		return pathErr("remove", name, err)
	}
	n, ok := dir.children[base]
	switch {
	case !ok:
		return pathErr("remove", name, syscall.ENOENT)
	case n.dir && len(n.children) > 0:
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(dir.children, base)
	dir.touch()
	return nil
}

// RemoveAll removes name and everything under it; a missing name is not an
// error.
func (m *MemFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parent(name)
	if err == syscall.ENOENT {
		return nil
	}
	if err != nil {
		return pathErr("unlinkat", name, err)
	}
	if _, ok := dir.children[base]; ok {
		delete(dir.children, base)
		dir.touch()
	}
	return nil
}

// MkdirAll creates dir and any missing parents with perm.
func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.root
	for _, part := range split(dir) {
		next, ok := cur.children[part]
		if !ok {
			next = newDirInode(perm.Perm())
			cur.children[part] = next
			cur.touch()
		}
		if !next.dir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		cur = next
	}
	return nil
}

// Stat describes name.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(name)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	return n.info(path.Base(clean(name))), nil
}

// ReadDir lists dir's live entries sorted by name.
func (m *MemFS) ReadDir(dir string) ([]os.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(dir)
	if err == nil && !n.dir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, pathErr("open", dir, err)
	}
	names := slices.Sorted(maps.Keys(n.children))
	entries := make([]os.DirEntry, len(names))
	for i, name := range names {
		entries[i] = fs.FileInfoToDirEntry(n.children[name].info(name))
	}
	return entries, nil
}

// SyncDir makes dir's current entries durable. Unlike the OS, it fails
// with ENOTDIR on a file, to catch code that syncs the wrong path.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(dir)
	if err == nil && !n.dir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return pathErr("sync", dir, err)
	}
	n.syncEntries()
	return nil
}
