package vfs

import (
	"os"
	"path"
	"strings"
	"syscall"
)

// clean turns name into an absolute, cleaned "/" path.
func clean(name string) string { return path.Clean("/" + name) }

// split returns the components of name; the root has none.
func split(name string) []string {
	p := clean(name)
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// lookup returns the live inode at name. The caller holds m.mu.
func (m *MemFS) lookup(name string) (*inode, error) {
	cur := m.root
	for _, part := range split(name) {
		if !cur.dir {
			return nil, syscall.ENOTDIR
		}
		next, ok := cur.children[part]
		if !ok {
			return nil, syscall.ENOENT
		}
		cur = next
	}
	return cur, nil
}

// parent returns the live directory that holds name's entry and the
// entry's name. The root has no parent entry: it fails with EINVAL. The
// caller holds m.mu.
func (m *MemFS) parent(name string) (*inode, string, error) {
	p := clean(name)
	if p == "/" {
		return nil, "", syscall.EINVAL
	}
	dir, err := m.lookup(path.Dir(p))
	if err != nil {
		return nil, "", err
	}
	if !dir.dir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, path.Base(p), nil
}

func pathErr(op, name string, err error) error {
	return &os.PathError{Op: op, Path: name, Err: err}
}
