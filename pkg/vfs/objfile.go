package vfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// objWriter is a file Create returned: data is buffered and, past one
// part, uploaded as a multipart upload (parts in the background, at most
// Concurrency at once); Close publishes the object (one Put for a small
// file, CompleteUpload for a large one). Nothing is visible before.
type objWriter struct {
	fs                *ObjectFS
	name, bucket, key string

	buf    []byte
	size   int64
	id     string // multipart upload id, once started
	number int    // last part number handed out
	sem    chan struct{}
	wg     sync.WaitGroup
	closed bool

	mu    sync.Mutex
	parts []Part
	err   error
}

func newObjWriter(o *ObjectFS, name, bucket, key string) *objWriter {
	return &objWriter{fs: o, name: name, bucket: bucket, key: key, sem: make(chan struct{}, o.opts.Concurrency)}
}

func (w *objWriter) fail() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *objWriter) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *objWriter) Write(p []byte) (int, error) {
	if w.closed {
		return 0, os.ErrClosed
	}
	if err := w.fail(); err != nil {
		return 0, err
	}
	n := len(p)
	ps := int(w.fs.opts.PartSize)
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, min(ps, max(len(p), 64<<10)))
		}
		take := min(len(p), ps-len(w.buf))
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
		if len(w.buf) == ps {
			if err := w.uploadPart(); err != nil {
				return n - len(p), err
			}
		}
	}
	w.size += int64(n)
	return n, nil
}

// uploadPart starts uploading the buffer as the next part.
func (w *objWriter) uploadPart() error {
	if w.id == "" {
		id, err := w.fs.CreateUpload(w.name)
		if err != nil {
			w.setErr(err)
			return err
		}
		w.id = id
	}
	w.number++
	number, data := w.number, w.buf
	w.buf = nil
	w.sem <- struct{}{}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.sem }()
		etag, err := w.fs.UploadPart(w.name, w.id, number, data)
		if err != nil {
			w.setErr(fmt.Errorf("upload part %d of %s: %w", number, w.name, err))
			return
		}
		w.mu.Lock()
		w.parts = append(w.parts, Part{Number: number, ETag: etag, Size: int64(len(data))})
		w.mu.Unlock()
	}()
	return nil
}

// Close publishes the object; an error leaves none (the upload, if any,
// is aborted).
func (w *objWriter) Close() error {
	if w.closed {
		return os.ErrClosed
	}
	w.closed = true
	if w.id == "" {
		if err := w.fail(); err != nil {
			return err
		}
		return w.fs.PutObject(w.name, w.buf, false)
	}
	if len(w.buf) > 0 && w.fail() == nil {
		_ = w.uploadPart()
	}
	w.wg.Wait()
	err := w.fail()
	if err == nil {
		slices.SortFunc(w.parts, func(a, b Part) int { return a.Number - b.Number })
		err = w.fs.CompleteUpload(w.name, w.id, w.parts)
	}
	if err != nil {
		_ = w.fs.AbortUpload(w.name, w.id) // best effort: an orphan upload costs storage, not correctness
	}
	return err
}

// Abort drops what was written: no object appears (an upload started is
// aborted). For writers that fail midway, instead of Close.
func (w *objWriter) Abort() error {
	if w.closed {
		return os.ErrClosed
	}
	w.closed = true
	w.wg.Wait()
	if w.id == "" {
		return nil
	}
	return w.fs.AbortUpload(w.name, w.id)
}

// Sync does nothing: the object is durable once Close returned nil.
func (w *objWriter) Sync() error { return nil }

func (w *objWriter) Stat() (os.FileInfo, error) {
	return &objInfo{name: Base(w.name), size: w.size}, nil
}

func (w *objWriter) Read([]byte) (int, error)          { return 0, writeOnly(w.name) }
func (w *objWriter) ReadAt([]byte, int64) (int, error) { return 0, writeOnly(w.name) }
func (w *objWriter) Seek(int64, int) (int64, error)    { return 0, writeOnly(w.name) }
func (w *objWriter) Truncate(int64) error              { return unsupported("truncate", w.name) }

func writeOnly(name string) error {
	return &os.PathError{Op: "read", Path: name, Err: errors.New("an object being written cannot be read")}
}

// objReader reads an object: sequential reads stream one GET from the
// current offset, ReadAt makes a ranged GET.
type objReader struct {
	fs                *ObjectFS
	name, bucket, key string
	info              *objInfo

	off    int64
	body   io.ReadCloser
	at     int64 // offset of body
	cancel context.CancelFunc
}

func (r *objReader) Read(p []byte) (int, error) {
	if r.info.dir {
		return 0, &os.PathError{Op: "read", Path: r.name, Err: errors.New("is a directory")}
	}
	if r.off >= r.info.size {
		return 0, io.EOF
	}
	if r.body == nil || r.at != r.off {
		if err := r.open(); err != nil {
			return 0, err
		}
	}
	n, err := r.body.Read(p)
	r.off += int64(n)
	r.at = r.off
	r.fs.meters.download(int64(n))
	if err == io.EOF && r.off < r.info.size {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (r *objReader) open() error {
	r.closeBody()
	ctx, cancel := r.fs.Context()
	body, err := r.fs.store.Get(ctx, r.bucket, r.key, r.off, -1)
	r.fs.meters.request(err, 0, 0)
	if err != nil {
		cancel()
		return &os.PathError{Op: "read", Path: r.name, Err: err}
	}
	r.body, r.at, r.cancel = body, r.off, cancel
	return nil
}

func (r *objReader) closeBody() {
	if r.body != nil {
		_ = r.body.Close()
		r.cancel()
		r.body = nil
	}
}

func (r *objReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.info.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.info.size-off)
	var got int
	err := r.fs.do(0, func(ctx context.Context) (int64, error) {
		body, err := r.fs.store.Get(ctx, r.bucket, r.key, off, n)
		if err != nil {
			return 0, err
		}
		defer body.Close()
		got, err = io.ReadFull(body, p[:n])
		return int64(got), err
	})
	if err == nil && got < len(p) {
		err = io.EOF
	}
	return got, err
}

func (r *objReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.info.size
	}
	if offset < 0 {
		return 0, &os.PathError{Op: "seek", Path: r.name, Err: errors.New("negative offset")}
	}
	r.off = offset
	return offset, nil
}

func (r *objReader) Close() error {
	r.closeBody()
	return nil
}

func (r *objReader) Stat() (os.FileInfo, error) { return r.info, nil }
func (r *objReader) Sync() error                { return nil }
func (r *objReader) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: r.name, Err: errors.New("opened read-only")}
}
func (r *objReader) Truncate(int64) error { return unsupported("truncate", r.name) }
