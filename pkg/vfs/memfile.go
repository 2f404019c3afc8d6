package vfs

import (
	"io"
	"os"
	"syscall"
)

// memFile is an open MemFS file or directory. Its methods take the
// MemFS's mutex, so they are safe for concurrent use, though the shared
// offset makes concurrent Read/Write/Seek meaningless.
type memFile struct {
	m      *MemFS
	n      *inode
	name   string // base name, for Stat
	pos    int64
	write  bool // opened read-write
	closed bool
}

var _ File = (*memFile)(nil)

// check returns the error for op on this handle, if any. The caller holds
// f.m.mu.
func (f *memFile) check(op string, wantWrite, wantFile bool) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, os.ErrClosed)
	case wantFile && f.n.dir:
		return pathErr(op, f.name, syscall.EISDIR)
	case wantWrite && !f.write:
		return pathErr(op, f.name, syscall.EBADF)
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("read", false, true); err != nil {
		return 0, err
	}
	if f.pos >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("read", false, true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("readat", f.name, syscall.EINVAL)
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("write", true, true); err != nil {
		return 0, err
	}
	f.n.writeAt(p, f.pos)
	f.pos += int64(len(p))
	return len(p), nil
}

func (f *memFile) Seek(offset int64, whence int) (int64, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("seek", false, false); err != nil {
		return 0, err
	}
	pos := offset
	switch whence {
	case io.SeekCurrent:
		pos += f.pos
	case io.SeekEnd:
		pos += int64(len(f.n.data))
	}
	if pos < 0 || whence < io.SeekStart || whence > io.SeekEnd {
		return 0, pathErr("seek", f.name, syscall.EINVAL)
	}
	f.pos = pos
	return pos, nil
}

// Sync makes the file's data durable; on a directory handle it makes the
// directory's entries durable, like SyncDir.
func (f *memFile) Sync() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("sync", false, false); err != nil {
		return err
	}
	if f.n.dir {
		f.n.syncEntries()
	} else {
		f.n.syncData()
	}
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("stat", false, false); err != nil {
		return nil, err
	}
	return f.n.info(f.name), nil
}

func (f *memFile) Truncate(size int64) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("truncate", false, true); err != nil {
		return err
	}
	if !f.write || size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	f.n.resize(size)
	return nil
}

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("close", false, false); err != nil {
		return err
	}
	f.closed = true
	return nil
}
