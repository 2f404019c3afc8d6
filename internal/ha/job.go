package ha

import (
	"encoding/json"
	"errors"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Job is a job's value in etcd (jobs/<id>).
type Job struct {
	ID string `json:"id"`
	// Active: the job should run somewhere (not finished, canceled or
	// failed); a job that is active and owned by nobody is orphaned.
	Active bool `json:"active"`
	// Writer is the daemon that wrote this version.
	Writer    string `json:"writer,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	// Record is the daemon's registry record of the job (opaque here).
	Record json.RawMessage `json:"record"`
	// Owner is the daemon that owns the job now ("" when none): from its
	// election, filled in by Jobs; not stored.
	Owner string `json:"-"`
	// ref is the job's name and state for api.FindJob (Config.JobRef of
	// Record), read once when the view takes this version.
	ref api.JobRef
}

// ErrNotOwner fails a write for a job this daemon does not own (any more).
var ErrNotOwner = errors.New("this daemon does not own the job (its etcd election was lost or never won)")

// ErrClaimLostInFlight fails a record write that etcd applied while this
// daemon owned the job but whose answer came only after it may have lost
// the job (a process frozen, or cut off from etcd, with the request on
// the wire). The record stands — the new owner starts from it — but this
// daemon must not act on it: a checkpoint waiting for it does not
// complete here, and nothing commits.
var ErrClaimLostInFlight = errors.New("this daemon lost the job while its record write was in flight (etcd applied the write while it owned the job; the new owner starts from it): not acting on it here")
