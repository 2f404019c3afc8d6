package vfs

import "os"

// hookFile is a File opened through a hookFS; it calls the hook before
// Read, ReadAt, Write, Sync, Truncate, Stat and Close. Seek only moves the
// offset and is not hooked.
type hookFile struct {
	f    File
	name string
	h    *hookFS
}

func (f *hookFile) Read(p []byte) (int, error) {
	if err := f.h.check(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.f.Read(p)
}

func (f *hookFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.h.check(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.f.ReadAt(p, off)
}

func (f *hookFile) Write(p []byte) (int, error) {
	if err := f.h.check(OpWrite, f.name); err != nil {
		return 0, err
	}
	return f.f.Write(p)
}

func (f *hookFile) Seek(offset int64, whence int) (int64, error) {
	return f.f.Seek(offset, whence)
}

func (f *hookFile) Sync() error {
	if err := f.h.check(OpSync, f.name); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f *hookFile) Stat() (os.FileInfo, error) {
	if err := f.h.check(OpStat, f.name); err != nil {
		return nil, err
	}
	return f.f.Stat()
}

func (f *hookFile) Truncate(size int64) error {
	if err := f.h.check(OpTruncate, f.name); err != nil {
		return err
	}
	return f.f.Truncate(size)
}

// Close always closes the underlying file, so a failed Close does not leak
// a descriptor, and then returns the hook's error if it had one, as a
// failing close(2) does.
func (f *hookFile) Close() error {
	herr := f.h.check(OpClose, f.name)
	err := f.f.Close()
	if herr != nil {
		return herr
	}
	return err
}
