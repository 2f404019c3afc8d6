package ha

import (
	"errors"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// ErrFenced fails a write of a job whose owner may have lost it: the
// owner's lease is expired, or could have expired without the owner
// knowing (no keep-alive answered in time).
var ErrFenced = errors.New("this daemon may no longer own the job (its etcd lease expired or could not be renewed): writes refused")

// Fence wraps a job's filesystem so that every operation that changes
// something (create, write, sync, truncate, rename, link, remove, mkdir,
// directory sync) fails with ErrFenced once valid returns false; reads go
// on. The owner's jobs write through it, so a daemon that wakes up after
// its lease expired (a frozen process, a partition) writes nothing more:
// no state file, no _metadata, no part file. valid must be cheap: it runs
// before each operation.
//
// The check and the operation are not one atomic step: an operation that
// passed the check just before the deadline may still land after it. The
// window is one call per goroutine; docs/high-availability.md says what
// closes it (the guarded record, create-if-absent metadata, Kafka fencing).
func Fence(fsys vfs.FS, valid func() bool) vfs.FS {
	return vfs.WithFaults(fsys, vfs.InjectorFunc(func(op vfs.Op) error {
		if mutates(op.Kind) && !valid() {
			return ErrFenced
		}
		return nil
	}))
}

func mutates(k vfs.OpKind) bool {
	switch k {
	case vfs.OpOpen, vfs.OpRead, vfs.OpStat, vfs.OpReadDir, vfs.OpClose:
		return false
	}
	return true
}
