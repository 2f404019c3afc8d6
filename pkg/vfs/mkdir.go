package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirAllDurable creates dir and any missing parents and makes the new
// entries durable: each directory it creates is synced into its parent. A
// file later published inside dir (write, fsync, rename, SyncDir(dir)) then
// survives a power loss; with plain MkdirAll the directory itself might not.
// An object URL has no directories to create or sync: MkdirAll only.
func MkdirAllDurable(fsys FS, dir string, perm os.FileMode) error {
	if IsObject(dir) {
		return fsys.MkdirAll(dir, perm)
	}
	dir = filepath.Clean(dir)
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		_, err := fsys.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return err
	}
	// Sync from the top so each new entry lands in a durable parent.
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}
