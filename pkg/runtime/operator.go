package runtime

import "errors"

// Every method below is called on the subtask's own goroutine, one at a
// time, in this order: Open, then any mix of Poll/Process, SnapshotState
// and the checkpoint notifications, then Close (always, even after an
// error, and also when Open failed). Only Source.Poll may block, and only
// briefly (see Poll).

// Source produces records. A source subtask calls Poll in a loop and, between
// calls, injects barriers and delivers checkpoint notifications.
type Source interface {
	Open(ctx *Context) error
	// Poll appends the next records to b (at most cap(b.Records) - len) and
	// returns. It should return within about 50ms when no data is available,
	// or earlier when ctx.Wakeup fires, so barriers are not delayed. It
	// returns ErrEndOfInput once a bounded source is exhausted (records
	// appended in the same call are still emitted). A Poll that appends no
	// records counts as the subtask's idle time (waiting for input), one
	// that appends some as busy time: wait for data inside a Poll that
	// returns empty-handed, not inside one that also returns records.
	Poll(b *Batch) error
	// SnapshotState records the source's position in ctx.State for
	// checkpoint id. Every record returned by earlier Polls is before the
	// barrier; none of the later ones are.
	SnapshotState(id int64) error
	Close() error
}

// ValueRecycler is a Source, or an Operator, that can reuse the bytes of
// the Values it emitted. RecycleValues tells it that no Value it has
// emitted is read any more: the next Poll or Process may overwrite them
// (Arena.Rewind). The engine calls it once the chain of the source (the
// operator's chain, headed by a source) has handled a batch, and only
// when every operator of the chain that sees those Values keeps none
// past the call (Plan.InputValues); the records that leave the chain are
// copied first. An operator implements it only if it keeps none of what
// it emits itself (a map). Only Values: Keys must not be in memory that
// is recycled (a map passes its input's Key on, to readers off the
// chain). This is Flink's object reuse, decided by the engine instead of
// promised by the user: the records stay in one cache-warm stretch of
// memory instead of new memory per batch.
type ValueRecycler interface {
	RecycleValues()
}

// PollRecycler is a Source that can also reuse the bytes of the Values of
// its earlier Polls while those of later ones are still read: the engine
// calls RecycleValuesUpTo(polls) when no Value emitted by its first polls
// calls of Poll (every call since Open, counted from 1) is read any more;
// the next Poll may overwrite them. The engine uses it where a batch's
// reader runs on another goroutine (a job that does not chain) and tells
// the source what that reader is done with (internal/engine/handback.go),
// under the rule of ValueRecycler: only when every operator that sees the
// Values keeps none past its Process call (Plan.InputValues).
type PollRecycler interface {
	ValueRecycler
	RecycleValuesUpTo(polls int64)
}

// ErrEndOfInput is returned by Poll when a bounded source has no more data.
var ErrEndOfInput = errors.New("end of input")

// Operator transforms records; a sink is an operator whose output is nil.
type Operator interface {
	Open(ctx *Context) error
	// Process handles a batch. Records must not be kept beyond the call
	// without copying (see Record). out is nil for sinks.
	Process(b *Batch, out Output) error
	Close() error
}

// Snapshotter is implemented by operators with operator state to record
// (sinks pre-commit here: flush, close what must be committed and store
// the committables in ctx.State). Keyed state is snapshotted by the runtime.
type Snapshotter interface {
	SnapshotState(id int64) error
}

// CheckpointListener is implemented by operators and sources that act when
// a checkpoint completes (sinks commit, queue sources ack) or is aborted.
type CheckpointListener interface {
	// NotifyCheckpointComplete: checkpoint id is durable. Commit everything
	// belonging to checkpoints up to and including id. An error fails the
	// job over (the commit is retried after restore).
	NotifyCheckpointComplete(id int64) error
	// NotifyCheckpointAborted: checkpoint id will never complete.
	NotifyCheckpointAborted(id int64)
}

// Finisher is implemented by operators that hold data back (buffers,
// timers): Finish is called once when all inputs ended (end of data), and
// may emit the remaining records.
type Finisher interface {
	Finish(out Output) error
}

// StateDescriber is implemented by operators that can summarise their
// snapshotted state for humans (source positions, pending committables):
// called right after SnapshotState; the result goes into the metadata.
type StateDescriber interface {
	DescribeState() map[string]any
}

// DetailExpiresAfter is the DescribeState key (a duration string) of an
// operator whose snapshot depends on something outside that expires: the
// Kafka sink's pending transactions, aborted by the broker once
// transactionTimeout passes. A restore planned later than the snapshot's
// time plus this is warned about (run --dry-run -s).
const DetailExpiresAfter = "expiresAfter"
