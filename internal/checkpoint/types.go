// Package checkpoint decides when checkpoints start, complete, fail and are
// discarded (the Coordinator: pure, no goroutines, no I/O), and defines the
// on-disk layout and _metadata format of checkpoints and savepoints.
package checkpoint

import (
	"fmt"
	"time"
)

// Kind says what a snapshot is for.
type Kind uint8

const (
	// Periodic is an automatic checkpoint, owned by the daemon.
	Periodic Kind = iota + 1
	// Savepoint is user-owned, never a recovery point, commits nothing.
	Savepoint
	// StopSavepoint is the last snapshot of a job stopped with `stop`:
	// completing it commits and ends the job.
	StopSavepoint
	// Final is taken when a bounded job's input ended, so that two-phase
	// sinks commit everything before the job finishes. It is persisted like
	// a periodic checkpoint when the job has checkpoint storage
	// (Config.PersistFinal), so a failure after its commit restores from it.
	Final
)

func (k Kind) String() string {
	switch k {
	case Periodic:
		return "checkpoint"
	case Savepoint:
		return "savepoint"
	case StopSavepoint:
		return "stop-with-savepoint"
	case Final:
		return "final-checkpoint"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// IsSavepoint reports whether the snapshot belongs to the user.
func (k Kind) IsSavepoint() bool { return k == Savepoint || k == StopSavepoint }

// Terminal reports whether completing it ends the job.
func (k Kind) Terminal() bool { return k == StopSavepoint || k == Final }

// Commits reports whether completing it lets sinks commit (and queue
// sources ack): every kind but an intermediate savepoint (Flink 1.15+).
func (k Kind) Commits() bool { return k != Savepoint }

// Reason says why a checkpoint failed (Flink's CheckpointFailureReason).
type Reason uint8

const (
	ReasonNone Reason = iota
	ReasonTimeout
	ReasonDeclined       // a subtask could not snapshot
	ReasonSubsumed       // a newer checkpoint completed first
	ReasonIO             // writing state or metadata failed
	ReasonJobFailing     // the job failed over while it was pending
	ReasonJobStopping    // the job was canceled or stopped
	ReasonNotRunning     // the job is not running (request refused)
	ReasonAlreadyStopped // a terminal snapshot already completed
)

func (r Reason) String() string {
	switch r {
	case ReasonTimeout:
		return "expired before completing"
	case ReasonDeclined:
		return "declined by a subtask"
	case ReasonSubsumed:
		return "subsumed by a newer checkpoint"
	case ReasonIO:
		return "I/O error"
	case ReasonJobFailing:
		return "job failing"
	case ReasonJobStopping:
		return "job stopping"
	case ReasonNotRunning:
		return "job not running"
	case ReasonAlreadyStopped:
		return "job already stopped"
	}
	return "none"
}

// CountsAsFailure reports whether the reason counts toward
// tolerableFailures (Flink ignores subsumption and job-level aborts).
func (r Reason) CountsAsFailure() bool {
	return r == ReasonTimeout || r == ReasonDeclined || r == ReasonIO
}

// Handle describes one subtask's snapshot: its state file (relative to the
// checkpoint directory) and what it holds.
type Handle struct {
	Task     int    `json:"-"`
	UID      string `json:"-"`
	Subtask  int    `json:"subtask"`
	File     string `json:"file,omitempty"` // "": the subtask had no state and wrote no file
	Size     int64  `json:"size"`
	Checksum uint32 `json:"checksum"`
	Keys     int64  `json:"keys,omitempty"`
	// TimerKeys counts the keys with timers (event or processing time).
	TimerKeys int64          `json:"timerKeys,omitempty"`
	KeyStart  int            `json:"keyGroupStart,omitempty"`
	KeyEnd    int            `json:"keyGroupEnd,omitempty"`
	Lists     map[string]int `json:"lists,omitempty"`
	Details   map[string]any `json:"details,omitempty"`
	// DB: an incremental checkpoint of a pebble subtask; the DB's files
	// hold its keyed value state, the state file the rest (nil: the state
	// file holds all of it).
	DB *DBFiles `json:"db,omitempty"`
}

// Request is a user's savepoint or stop, or the job's final checkpoint.
type Request struct {
	Ref   int64 // caller's token, echoed in the Reply
	Kind  Kind
	Dir   string // target directory for savepoints
	Drain bool   // stop --drain
}

// Status of a checkpoint in the history.
type Status uint8

const (
	StatusInProgress Status = iota + 1
	StatusCompleted
	StatusFailed
)

func (s Status) String() string {
	switch s {
	case StatusInProgress:
		return "IN_PROGRESS"
	case StatusCompleted:
		return "COMPLETED"
	case StatusFailed:
		return "FAILED"
	}
	return "UNKNOWN"
}

// Stats is one checkpoint's entry in the history.
type Stats struct {
	ID        int64
	Kind      Kind
	Status    Status
	Trigger   time.Time
	Duration  time.Duration
	Size      int64
	Path      string
	Reason    string
	Discarded bool
}
