package vfs

// WithLog returns an FS that calls fn with every operation of fsys,
// including those on the files it opens, just before the operation runs,
// on the caller's goroutine. fn must be safe for concurrent use if the FS
// is used concurrently.
func WithLog(fsys FS, fn func(Op)) FS {
	return &hookFS{fs: fsys, before: func(op Op) error { fn(op); return nil }}
}
