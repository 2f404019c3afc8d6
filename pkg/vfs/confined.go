package vfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Confined is the operating system's filesystem in which every operation
// on a path under one of roots (absolute, symlink-free directories) goes
// through an os.Root opened on that root: no symlink can lead it out of
// the root, whether it was there when the path was checked or swapped in
// a moment later (os.Root resolves each component beneath the root's open
// handle; a link that stays inside works if it is relative, an absolute
// one counts as leading out). Paths outside every root are used as the OS
// would. The daemon
// uses it for security.allowed-paths: checking where a path leads and then
// writing to it by name would follow a link that appears in between.
func Confined(roots []string) FS {
	clean := make([]string, 0, len(roots))
	for _, r := range roots {
		clean = append(clean, filepath.Clean(r))
	}
	// Longest first: a path is confined by the innermost root holding it.
	sort.Slice(clean, func(i, j int) bool { return len(clean[i]) > len(clean[j]) })
	return confinedFS{roots: clean}
}

type confinedFS struct{ roots []string }

// under returns the root that holds name (strictly below it) and name
// relative to it; ok is false for a path under no root.
func (c confinedFS) under(name string) (root, rel string, ok bool) {
	name = filepath.Clean(name)
	for _, r := range c.roots {
		if rest, found := strings.CutPrefix(name, r+string(filepath.Separator)); found && rest != "" {
			return r, rest, true
		}
	}
	return "", "", false
}

// in runs op on the os.Root of the root holding name, or returns ok false.
func (c confinedFS) in(name string, op func(r *os.Root, rel string) error) (bool, error) {
	root, rel, ok := c.under(name)
	if !ok {
		return false, nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return true, err
	}
	defer r.Close()
	return true, op(r, rel)
}

func (c confinedFS) openFile(name string, flag int, perm os.FileMode, osOpen func() (*os.File, error)) (File, error) {
	var f *os.File
	ok, err := c.in(name, func(r *os.Root, rel string) (err error) {
		f, err = r.OpenFile(rel, flag, perm)
		return err
	})
	if !ok {
		return wrapOSFile(osOpen())
	}
	return wrapOSFile(f, err)
}

func (c confinedFS) Create(name string) (File, error) {
	return c.openFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666, func() (*os.File, error) { return os.Create(name) })
}

// Open opens read-only with O_NONBLOCK, as Default does.
func (c confinedFS) Open(name string) (File, error) {
	return c.openFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0, func() (*os.File, error) {
		return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
}

func (c confinedFS) OpenReadWrite(name string) (File, error) {
	return c.openFile(name, os.O_RDWR, 0, func() (*os.File, error) { return os.OpenFile(name, os.O_RDWR, 0) })
}

// errAcrossRoots refuses a rename or link between a root and elsewhere.
var errAcrossRoots = errors.New("crosses the boundary of a security.allowed-paths directory")

// two runs op on two paths in the same root, or with the OS when both are
// outside every root.
func (c confinedFS) two(what, a, b string, op func(r *os.Root, relA, relB string) error, osOp func(a, b string) error) error {
	ra, relA, okA := c.under(a)
	rb, relB, okB := c.under(b)
	switch {
	case !okA && !okB:
		return osOp(a, b)
	case ra != rb:
		return &os.LinkError{Op: what, Old: a, New: b, Err: errAcrossRoots}
	}
	r, err := os.OpenRoot(ra)
	if err != nil {
		return err
	}
	defer r.Close()
	return op(r, relA, relB)
}

func (c confinedFS) Rename(oldname, newname string) error {
	return c.two("rename", oldname, newname, func(r *os.Root, a, b string) error { return r.Rename(a, b) }, os.Rename)
}

func (c confinedFS) Link(oldname, newname string) error {
	return c.two("link", oldname, newname, func(r *os.Root, a, b string) error { return r.Link(a, b) }, os.Link)
}

func (c confinedFS) Remove(name string) error {
	if ok, err := c.in(name, func(r *os.Root, rel string) error { return r.Remove(rel) }); ok {
		return err
	}
	return os.Remove(name)
}

func (c confinedFS) RemoveAll(name string) error {
	if ok, err := c.in(name, func(r *os.Root, rel string) error { return r.RemoveAll(rel) }); ok {
		return err
	}
	return os.RemoveAll(name)
}

// MkdirAll creates a missing root itself by name (it comes from the
// daemon's config), then everything below it through the root.
func (c confinedFS) MkdirAll(dir string, perm os.FileMode) error {
	root, rel, ok := c.under(dir)
	if !ok {
		return os.MkdirAll(dir, perm)
	}
	if err := os.MkdirAll(root, perm); err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.MkdirAll(rel, perm)
}

func (c confinedFS) Stat(name string) (os.FileInfo, error) {
	var fi os.FileInfo
	if ok, err := c.in(name, func(r *os.Root, rel string) (err error) {
		fi, err = r.Stat(rel)
		return err
	}); ok {
		return fi, err
	}
	return os.Stat(name)
}

func (c confinedFS) ReadDir(dir string) ([]os.DirEntry, error) {
	var out []os.DirEntry
	ok, err := c.in(dir, func(r *os.Root, rel string) error {
		f, err := r.Open(rel)
		if err != nil {
			return err
		}
		defer f.Close()
		if out, err = f.ReadDir(-1); err != nil {
			return err
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
		return nil
	})
	if !ok {
		return os.ReadDir(dir)
	}
	return out, err
}

func (c confinedFS) SyncDir(dir string) error {
	ok, err := c.in(dir, func(r *os.Root, rel string) error { return syncOpened(r.Open(rel)) })
	if !ok {
		return osFS{}.SyncDir(dir)
	}
	return err
}

// String names the roots (for logs).
func (c confinedFS) String() string { return fmt.Sprintf("os confined to %v", c.roots) }
