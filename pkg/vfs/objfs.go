package vfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
)

// ObjectFS is an FS over a Store, for object URLs (s3://bucket/key). It
// offers what an object store can honestly do and refuses the rest:
//
//   - Create returns a write-only file whose object appears, whole, when
//     Close returns nil (Sync does nothing; an error or a crash before
//     Close leaves no object). Large files go up as a multipart upload.
//   - Open reads an object (ranged GETs). Stat and ReadDir see a key
//     prefix ending at "/" as a directory; directories exist implicitly:
//     MkdirAll and SyncDir do nothing, ReadDir of an empty prefix is empty.
//   - Remove deletes an object, RemoveAll every object below a prefix.
//   - Rename, Link, OpenReadWrite and Truncate fail with
//     errors.ErrUnsupported: code that publishes through a rename asks
//     Objects for the object store instead (PutObject with ifAbsent, or a
//     multipart upload completed on commit).
//
// Every request gets a context bounded by the deadline of the view (With)
// and by Options.RequestTimeout, and is counted in the view's meters.
type ObjectFS struct {
	store    Store
	opts     ObjectOptions
	meters   meters
	deadline time.Time
}

// ObjectOptions configure an ObjectFS.
type ObjectOptions struct {
	// PartSize is the part size of the multipart uploads Create makes for
	// files larger than it, and of the file sink's (default MinPartSize,
	// which is also S3's minimum; smaller sizes are for tests on a
	// FileStoreWith a smaller minimum).
	PartSize int64
	// Concurrency is the number of parts one file uploads or downloads at
	// once (default 4).
	Concurrency int
	// RequestTimeout bounds each request, retries included (default 1 min).
	RequestTimeout time.Duration
}

// NewObjectFS returns an FS over store.
func NewObjectFS(store Store, o ObjectOptions) *ObjectFS {
	if o.PartSize <= 0 {
		o.PartSize = MinPartSize
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = time.Minute
	}
	return &ObjectFS{store: store, opts: o}
}

// Store is the store the FS writes to.
func (o *ObjectFS) Store() Store { return o.store }

// Options are the FS's options.
func (o *ObjectFS) Options() ObjectOptions { return o.opts }

// With returns a view of o whose requests are also counted in m (when not
// nil) and end by deadline (when not zero, and earlier than o's).
func (o *ObjectFS) With(m *Meter, deadline time.Time) *ObjectFS {
	v := *o
	if m != nil {
		v.meters = o.meters.with(m)
	}
	if !deadline.IsZero() && (v.deadline.IsZero() || deadline.Before(v.deadline)) {
		v.deadline = deadline
	}
	return &v
}

// Context returns a context for one request of the view.
func (o *ObjectFS) Context() (context.Context, context.CancelFunc) {
	end := time.Now().Add(o.opts.RequestTimeout)
	if !o.deadline.IsZero() && o.deadline.Before(end) {
		end = o.deadline
	}
	return context.WithDeadline(context.Background(), end)
}

// do runs one request and counts it.
func (o *ObjectFS) do(up int64, f func(ctx context.Context) (down int64, err error)) error {
	ctx, cancel := o.Context()
	defer cancel()
	down, err := f(ctx)
	if errors.Is(err, errRefused) {
		return err // never sent (Guarded)
	}
	o.meters.request(err, up, down)
	return err
}

// objKey maps an object URL to bucket and key, refusing other paths.
func objKey(op, name string) (bucket, key string, err error) {
	bucket, key, ok := SplitObject(name)
	if !ok || bucket == "" {
		return "", "", &os.PathError{Op: op, Path: name, Err: fmt.Errorf("not an object URL (s3://bucket/key)")}
	}
	return bucket, key, nil
}

// unsupported is the error of what object stores cannot do.
func unsupported(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: fmt.Errorf("%w on object storage (objects cannot be renamed, linked or modified in place)", errors.ErrUnsupported)}
}

// Create opens a new object for writing; see ObjectFS.
func (o *ObjectFS) Create(name string) (File, error) {
	bucket, key, err := objKey("create", name)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, &os.PathError{Op: "create", Path: name, Err: fmt.Errorf("an object needs a key")}
	}
	return newObjWriter(o, name, bucket, key), nil
}

// Open opens an object (or a directory) for reading.
func (o *ObjectFS) Open(name string) (File, error) {
	fi, err := o.Stat(name)
	if err != nil {
		return nil, err
	}
	bucket, key, _ := SplitObject(name)
	return &objReader{fs: o, name: name, bucket: bucket, key: key, info: fi.(*objInfo)}, nil
}

func (o *ObjectFS) OpenReadWrite(name string) (File, error) { return nil, unsupported("open", name) }
func (o *ObjectFS) Rename(oldname, _ string) error          { return unsupported("rename", oldname) }
func (o *ObjectFS) Link(oldname, _ string) error            { return unsupported("link", oldname) }
func (o *ObjectFS) MkdirAll(string, os.FileMode) error      { return nil }
func (o *ObjectFS) SyncDir(string) error                    { return nil }

// Remove deletes an object in one request. Unlike os.Remove it does not
// report a missing object (S3's DELETE cannot tell), and it leaves the
// objects below a "directory" alone (RemoveAll removes those).
func (o *ObjectFS) Remove(name string) error {
	bucket, key, err := objKey("remove", name)
	if err != nil {
		return err
	}
	return o.do(0, func(ctx context.Context) (int64, error) { return 0, o.store.Delete(ctx, bucket, key) })
}

// RemoveAll deletes name and every object below it.
func (o *ObjectFS) RemoveAll(name string) error {
	bucket, key, err := objKey("removeall", name)
	if err != nil {
		return err
	}
	var objs []ObjectInfo
	if err := o.do(0, func(ctx context.Context) (_ int64, err error) {
		objs, _, err = o.store.List(ctx, bucket, dirPrefix(key), "")
		return 0, err
	}); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	keys := []string{}
	if key != "" {
		keys = append(keys, key)
	}
	for _, ob := range objs {
		keys = append(keys, ob.Key)
	}
	for chunk := range slices.Chunk(keys, 1000) {
		if err := o.do(0, func(ctx context.Context) (int64, error) { return 0, o.store.Delete(ctx, bucket, chunk...) }); err != nil {
			return &os.PathError{Op: "removeall", Path: name, Err: err}
		}
	}
	return nil
}

// dirPrefix is the listing prefix of the "directory" key.
func dirPrefix(key string) string {
	if key == "" {
		return ""
	}
	return strings.TrimSuffix(key, "/") + "/"
}

// Stat describes an object, or a directory: a bucket, or a prefix that
// has objects below it.
func (o *ObjectFS) Stat(name string) (os.FileInfo, error) {
	bucket, key, err := objKey("stat", name)
	if err != nil {
		return nil, err
	}
	if key != "" {
		var info ObjectInfo
		err := o.do(0, func(ctx context.Context) (_ int64, err error) {
			info, err = o.store.Head(ctx, bucket, key)
			return 0, err
		})
		if err == nil {
			return &objInfo{name: Base(name), size: info.Size, mod: info.ModTime}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, &os.PathError{Op: "stat", Path: name, Err: err}
		}
	}
	var objs []ObjectInfo
	var prefixes []string
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		objs, prefixes, err = o.store.List(ctx, bucket, dirPrefix(key), "/")
		return 0, err
	})
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	case err == nil && (key == "" || len(objs)+len(prefixes) > 0):
		return &objInfo{name: Base(name), dir: true}, nil
	}
	return nil, &os.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadDir lists the objects and prefixes directly below dir, by name. An
// empty or missing prefix is an empty directory: object stores have no
// directories to create or miss.
func (o *ObjectFS) ReadDir(dir string) ([]os.DirEntry, error) {
	bucket, key, err := objKey("readdir", dir)
	if err != nil {
		return nil, err
	}
	var objs []ObjectInfo
	var prefixes []string
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		objs, prefixes, err = o.store.List(ctx, bucket, dirPrefix(key), "/")
		return 0, err
	})
	if err != nil {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: err}
	}
	out := make([]os.DirEntry, 0, len(objs)+len(prefixes))
	p := dirPrefix(key)
	for _, ob := range objs {
		if n := strings.TrimPrefix(ob.Key, p); n != "" {
			out = append(out, fs.FileInfoToDirEntry(&objInfo{name: n, size: ob.Size, mod: ob.ModTime}))
		}
	}
	for _, pr := range prefixes {
		if n := strings.TrimSuffix(strings.TrimPrefix(pr, p), "/"); n != "" {
			out = append(out, fs.FileInfoToDirEntry(&objInfo{name: n, dir: true}))
		}
	}
	slices.SortFunc(out, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// String names the FS (for logs).
func (o *ObjectFS) String() string { return fmt.Sprintf("object storage %v", o.store) }

// objInfo is the os.FileInfo of an object or a prefix.
type objInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i *objInfo) Name() string       { return i.name }
func (i *objInfo) Size() int64        { return i.size }
func (i *objInfo) ModTime() time.Time { return i.mod }
func (i *objInfo) IsDir() bool        { return i.dir }
func (i *objInfo) Sys() any           { return nil }
func (i *objInfo) Mode() os.FileMode {
	if i.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
