package ha

import (
	"errors"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// ErrFenced fails a write of a job whose owner may have lost it: the
// owner's lease is expired, or could have expired without the owner
// knowing (no keep-alive answered in time).
var ErrFenced = errors.New("this daemon may no longer own the job (its etcd lease expired or could not be renewed): writes refused")

// Fence wraps a job's filesystem so that every change fails with
// ErrFenced once valid returns false; reads go on (vfs.Guarded: on a disk
// every mutating operation — create, write, sync, truncate, rename, link,
// remove, mkdir, directory sync — is checked; in object storage every
// request that changes the bucket — a PUT, _metadata's create-if-absent
// PUT, a multipart part or completion, a DELETE). The owner's jobs write
// through it, so a daemon that wakes up after its lease expired (a frozen
// process, a partition) writes nothing more: no state file, no _metadata,
// no part file, no object. valid must be cheap: it runs before each change.
//
// The check and the operation are not one atomic step: an operation that
// passed the check just before the deadline may still land after it. The
// window is one call per goroutine; docs/high-availability.md says what
// closes it (the guarded record, create-if-absent metadata, Kafka fencing).
func Fence(fsys vfs.FS, valid func() bool) vfs.FS {
	return vfs.Guarded(fsys, func() error {
		if !valid() {
			return ErrFenced
		}
		return nil
	})
}
