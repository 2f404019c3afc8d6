package ha

import (
	"encoding/json"
	"errors"
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
}

// ErrNotOwner fails a write for a job this daemon does not own (any more).
var ErrNotOwner = errors.New("this daemon does not own the job (its etcd election was lost or never won)")
