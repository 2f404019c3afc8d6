package vfs

import (
	"os"
	"strings"
)

// hookFS calls before ahead of every operation, including those on the
// files it opened, and fails the operation with before's error without
// running it. It is the one mechanism under WithFaults, WithLog, Count and
// CrashAt.
type hookFS struct {
	fs     FS
	before func(Op) error
}

func (h *hookFS) check(kind OpKind, name string) error {
	if err := h.before(Op{Kind: kind, Path: name}); err != nil {
		return pathErr(strings.ToLower(kind.String()), name, err)
	}
	return nil
}

func (h *hookFS) check2(kind OpKind, oldname, newname string) error {
	if err := h.before(Op{Kind: kind, Path: oldname, Path2: newname}); err != nil {
		return &os.LinkError{Op: strings.ToLower(kind.String()), Old: oldname, New: newname, Err: err}
	}
	return nil
}

func (h *hookFS) open(kind OpKind, name string, open func(string) (File, error)) (File, error) {
	if err := h.check(kind, name); err != nil {
		return nil, err
	}
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	return &hookFile{f: f, name: name, h: h}, nil
}

func (h *hookFS) Create(name string) (File, error) { return h.open(OpCreate, name, h.fs.Create) }

func (h *hookFS) Open(name string) (File, error) { return h.open(OpOpen, name, h.fs.Open) }

func (h *hookFS) OpenReadWrite(name string) (File, error) {
	return h.open(OpOpenReadWrite, name, h.fs.OpenReadWrite)
}

func (h *hookFS) Rename(oldname, newname string) error {
	if err := h.check2(OpRename, oldname, newname); err != nil {
		return err
	}
	return h.fs.Rename(oldname, newname)
}

func (h *hookFS) Link(oldname, newname string) error {
	if err := h.check2(OpLink, oldname, newname); err != nil {
		return err
	}
	return h.fs.Link(oldname, newname)
}

func (h *hookFS) Remove(name string) error {
	if err := h.check(OpRemove, name); err != nil {
		return err
	}
	return h.fs.Remove(name)
}

func (h *hookFS) RemoveAll(name string) error {
	if err := h.check(OpRemoveAll, name); err != nil {
		return err
	}
	return h.fs.RemoveAll(name)
}

func (h *hookFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := h.check(OpMkdirAll, dir); err != nil {
		return err
	}
	return h.fs.MkdirAll(dir, perm)
}

func (h *hookFS) Stat(name string) (os.FileInfo, error) {
	if err := h.check(OpStat, name); err != nil {
		return nil, err
	}
	return h.fs.Stat(name)
}

func (h *hookFS) ReadDir(dir string) ([]os.DirEntry, error) {
	if err := h.check(OpReadDir, dir); err != nil {
		return nil, err
	}
	return h.fs.ReadDir(dir)
}

func (h *hookFS) SyncDir(dir string) error {
	if err := h.check(OpSyncDir, dir); err != nil {
		return err
	}
	return h.fs.SyncDir(dir)
}
