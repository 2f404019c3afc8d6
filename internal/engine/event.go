package engine

import (
	"fmt"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// EventKind says what travels in an input channel. Control events share the
// channel with record batches, so a barrier can never overtake a record.
type EventKind uint8

const (
	EventBatch EventKind = iota + 1
	// EventBarrier carries a checkpoint barrier.
	EventBarrier
	// EventEndOfData: the upstream subtask will send no more records (its
	// input ended or the job is being drained). Barriers may still follow.
	EventEndOfData
	// EventEndOfPartition: the upstream subtask is done; nothing follows.
	EventEndOfPartition
	// EventWatermark carries the upstream subtask's watermark (Watermark),
	// or says it is idle (Idle: no records and no watermark until a later
	// watermark event, which makes it active again).
	EventWatermark
)

func (k EventKind) String() string {
	switch k {
	case EventBatch:
		return "batch"
	case EventBarrier:
		return "barrier"
	case EventEndOfData:
		return "end-of-data"
	case EventEndOfPartition:
		return "end-of-partition"
	case EventWatermark:
		return "watermark"
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one element of an input channel.
type Event struct {
	Kind      EventKind
	Batch     *runtime.Batch
	Barrier   Barrier
	Watermark int64 // EventWatermark
	Idle      bool  // EventWatermark
}

// Barrier marks the point in every stream where checkpoint ID is cut.
type Barrier struct {
	ID        int64
	Kind      checkpoint.Kind
	Timestamp time.Time
	// Dir is where subtasks write their state files; empty means the
	// snapshot is not persisted (the final checkpoint of a job without
	// checkpoint storage: it exists only to commit).
	Dir string
	// FS is the filesystem the snapshot is written through (see
	// snapshotFS); nil: the job's.
	FS vfs.FS
}
