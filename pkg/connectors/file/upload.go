package file

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// upload is an in-progress part file in object storage (Flink's
// RecoverableMultiPartUpload): a multipart upload of the part's finished
// name, invisible until it is completed at commit. It is the vfs.File a
// partFile writes to:
//
//   - Write buffers the tail; each time the tail reaches the part size it
//     is uploaded as the next part, in the background (at most
//     concurrency parts at once; Write then waits).
//   - Sync waits for the parts in flight: afterwards the upload id, the
//     uploaded parts and the tail are the part's recoverable state, which
//     PreCommit records in the snapshot (the tail, < one part, in the
//     snapshot itself).
//   - seal uploads the tail as the last part (which may be small): the
//     part is then pending, completed by commitUpload.
//   - Close only waits for the parts in flight: an upload is never aborted
//     because a writer closed (a snapshot may refer to it); orphans are
//     aborted by a restore (cleanupObjects).
//
// The upload itself is created with the first part, so a part that stays
// below one part size until it is sealed costs no request before then.
type upload struct {
	obj      *vfs.ObjectFS
	name     string // the part's finished object URL
	partSize int
	sem      chan struct{}

	id    string
	parts []vfs.Part // uploaded, numbered 1..len
	tail  []byte
	size  int64
	next  int // next part number
	wg    sync.WaitGroup

	mu     sync.Mutex
	done   []vfs.Part // finished in the background, merged by wait
	err    error
	sealed bool
}

func newUpload(obj *vfs.ObjectFS, name string, partSize, concurrency int) *upload {
	return &upload{obj: obj, name: name, partSize: partSize, sem: make(chan struct{}, concurrency), next: 1}
}

// restoredUpload continues an upload as a snapshot recorded it.
func restoredUpload(obj *vfs.ObjectFS, name string, partSize, concurrency int, id string, parts []vfs.Part, tail []byte) *upload {
	u := newUpload(obj, name, partSize, concurrency)
	u.id, u.parts, u.tail, u.next = id, slices.Clone(parts), slices.Clone(tail), len(parts)+1
	for _, p := range parts {
		u.size += p.Size
	}
	u.size += int64(len(tail))
	return u
}

func (u *upload) Write(p []byte) (int, error) {
	if err := u.failed(); err != nil {
		return 0, err
	}
	u.tail = append(u.tail, p...)
	u.size += int64(len(p))
	if len(u.tail) >= u.partSize {
		if err := u.uploadTail(); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

func (u *upload) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// uploadTail starts uploading the whole tail as the next part.
func (u *upload) uploadTail() error {
	if u.id == "" {
		id, err := u.obj.CreateUpload(u.name)
		if err != nil {
			return fmt.Errorf("start multipart upload of %s: %w", u.name, err)
		}
		u.id = id
	}
	number, data := u.next, u.tail
	u.next++
	u.tail = make([]byte, 0, u.partSize)
	u.sem <- struct{}{}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		defer func() { <-u.sem }()
		etag, err := u.obj.UploadPart(u.name, u.id, number, data)
		u.mu.Lock()
		defer u.mu.Unlock()
		if err != nil && u.err == nil {
			u.err = fmt.Errorf("upload part %d of %s: %w", number, u.name, err)
		}
		u.done = append(u.done, vfs.Part{Number: number, ETag: etag, Size: int64(len(data))})
	}()
	return nil
}

// wait waits for the parts in flight and merges them into parts.
func (u *upload) wait() error {
	u.wg.Wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	u.parts = append(u.parts, u.done...)
	u.done = u.done[:0]
	slices.SortFunc(u.parts, func(a, b vfs.Part) int { return a.Number - b.Number })
	return u.err
}

// Sync makes the uploaded parts final: what is not in them is the tail.
func (u *upload) Sync() error { return u.wait() }

// seal uploads the tail as the last part; the upload is then ready to be
// completed. An empty part has no upload (id "").
func (u *upload) seal() error {
	if u.sealed {
		return nil
	}
	if len(u.tail) > 0 {
		if err := u.uploadTail(); err != nil {
			return err
		}
	}
	if err := u.wait(); err != nil {
		return err
	}
	u.sealed = true
	return nil
}

// Close waits for the parts in flight; it neither completes nor aborts.
func (u *upload) Close() error { return u.wait() }

func (u *upload) Stat() (os.FileInfo, error) { return nil, errUploadOp }
func (u *upload) Read([]byte) (int, error)   { return 0, errUploadOp }
func (u *upload) ReadAt([]byte, int64) (int, error) {
	return 0, errUploadOp
}
func (u *upload) Seek(int64, int) (int64, error) { return 0, errUploadOp }
func (u *upload) Truncate(int64) error           { return errUploadOp }

var errUploadOp = errors.New("file sink: an in-progress multipart upload is only written (bug)")
