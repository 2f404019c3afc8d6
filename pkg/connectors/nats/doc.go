// Package nats is the NATS JetStream connector: the "nats" source and the
// "nats" sink (docs/nats.md is the user's guide).
//
// The source has two modes.
//
// Bookmark (mode: bookmark): the stream is a transaction log replayed from
// a position. An ordered consumer (ephemeral, no acks) reads the stream in
// sequence order; the sequence of the next message is the source's state,
// taken at every barrier. A restore (failure, `run -s`) resumes at exactly
// that sequence, so with the file sink the output is exactly-once. One
// subtask per stream (parallelism 1). Without checkpointing the job is
// refused unless discardOn: emit, which reads a durable consumer
// acknowledged on emit instead (the broker keeps the position:
// at-most-once across restarts).
//
// Queue (mode: queue): a durable pull consumer shared by the subtasks,
// with explicit acks and MaxAckPending = maxBacklog. queueSemantics
// at-least-once acknowledges a message when the checkpoint covering it
// completes (ledger.go: a message emitted before barrier n is covered by
// n; an intermediate savepoint's messages wait for the next completed
// checkpoint) and returns (nak) the messages of an aborted checkpoint and,
// at Close, everything not acknowledged. at-most-once acknowledges the
// messages of a Poll, and flushes, before the records leave it. Queue
// state holds bookkeeping only: nothing is replayed, the broker
// redelivers. Messages waiting for their checkpoint are kept alive with
// in-progress acks every ackWait/3 (acker.go), so AckWait never redelivers
// them.
//
// Goroutines: the client's delivery goroutine fills the inbox (inbox.go);
// Open, Poll, SnapshotState, the checkpoint notifications and Close run on
// the subtask's goroutine, in the runtime's order; the acker's goroutine
// sends due acks in batches and the keepalives. The ledger is shared with
// the acker under queueSource.mu. Fault points (runtime.Env.Fire):
// nats.poll, nats.snapshot, nats.ack (before each ack batch), nats.nak,
// nats.publish (sink, per batch).
//
// The sink publishes asynchronously and waits for every publish ack at
// each barrier (at-least-once); message ids derived from the subtask's
// record count let the stream drop replays (see sink).
package nats
