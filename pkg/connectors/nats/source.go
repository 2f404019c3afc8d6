package nats

import (
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Gauges published by the sources (per subtask; info sums them).
const (
	gaugePending  = "pendingAcks"      // queue: messages received and not yet acknowledged or returned
	gaugeAcks     = "acksSent"         // queue: acknowledgements sent
	gaugeNaks     = "naksSent"         // queue: messages returned to the queue (negative acks)
	gaugeProgress = "progressAcksSent" // queue: in-progress keepalives sent
	gaugeSkipped  = "recordsSkipped"   // invalid JSON skipped (onDecodeError: skip)
	gaugeLag      = "pendingRecords"   // bookmark: messages in the stream after the last one read
	gaugeNextSeq  = "nextSequence"     // bookmark: stream sequence of the next message to read
)

// State lists.
const (
	bookmarkList = "bookmark" // bookmark mode: the position
	queueList    = "queue"    // queue mode: bookkeeping only (the consumer's name), never replayed
	// queueNoteVersion: version 2 holds the consumer name length-prefixed
	// (version 1 had it run to the end). Nothing reads it back.
	queueNoteVersion = 2
)

const (
	// pollWait is how long Poll waits for messages before returning empty.
	pollWait = 50 * time.Millisecond
	// closeDrainTimeout bounds the wait at close for messages the client
	// already received to reach the source (so they can be returned).
	closeDrainTimeout = 2 * time.Second
	// bookmarkInbox is how many messages a bookmark source buffers ahead
	// of Poll.
	bookmarkInbox = 4096
	// pullBatch bounds the messages one pull request asks for.
	pullBatch = 1024
)

func newSource(cfg *sourceConfig) runtime.Source {
	if cfg.bookmark {
		return &bookmarkSource{cfg: cfg}
	}
	return &queueSource{cfg: cfg}
}

// fire consults the fault hook of the job's environment.
func fire(ctx *runtime.Context, point string, attrs ...any) error {
	if !ctx.FaultsArmed() {
		return nil
	}
	return ctx.Fault(point, append([]any{ctx.UID(), ctx.Subtask()}, attrs...)...)
}
