package runtime

import "math"

// Event time. A watermark w says that no record with a timestamp <= w is
// expected any more; records at or below it are late. Timestamps and
// watermarks are Unix milliseconds.
const (
	// MinWatermark is the watermark before any: everything is on time.
	MinWatermark int64 = math.MinInt64
	// MaxWatermark is the watermark of an input that ended: every event-time
	// timer fires and every window closes.
	MaxWatermark int64 = math.MaxInt64
)

// TimeDomain says which clock a timer follows.
type TimeDomain uint8

const (
	// EventTime timers fire when the watermark passes them.
	EventTime TimeDomain = iota + 1
	// ProcessingTime timers fire when the wall clock reaches them.
	ProcessingTime
)

func (d TimeDomain) String() string {
	switch d {
	case EventTime:
		return "event-time"
	case ProcessingTime:
		return "processing-time"
	}
	return "TimeDomain(?)"
}

// Timers is the timer service of an operator with keyed state (Flink's
// TimerService). Timers belong to the current key (Context.SetCurrentKey):
// one timer per key, domain and timestamp (registering it again is a
// no-op). They are keyed state: in every checkpoint and savepoint,
// redistributed by key group on a restore at another parallelism.
// Processing-time timers that came due while the job was down fire right
// after the restore. Used from the subtask's goroutine only.
type Timers interface {
	RegisterEventTime(ts int64)
	RegisterProcessingTime(ts int64)
	DeleteEventTime(ts int64)
	DeleteProcessingTime(ts int64)
}

// TimerLister is implemented by the engine's Timers: it lists the timers
// of every key of the subtask in domain d (in no order; fn must not
// register or delete timers). For an operator that converts state written
// in an older layout at Open, where only the timers say what is pending
// (the window's panes, docs/window-panes.md).
type TimerLister interface {
	EachTimer(d TimeDomain, fn func(key string, ts []int64))
}

// TimerListener is implemented by operators that register timers. The
// engine calls OnTimer on the subtask's goroutine with the timer's key set
// as the current key: event-time timers in timestamp order when the input
// watermark passes them (before the watermark goes downstream), and
// processing-time timers when the wall clock reaches them.
type TimerListener interface {
	OnTimer(ts int64, domain TimeDomain, out Output) error
}

// WatermarkListener is implemented by operators that act on event time for
// all keys at once (a window that fires for every key when the watermark
// passes its end, a reduce sweeping expired keys) rather than by a timer
// per key. The engine calls OnWatermark on the subtask's goroutine (its
// chain head's, when chained: an operator that is a WatermarkListener
// but no TimerListener may chain) each time its input watermark
// advances to w, after the event-time timers at or before w fired and
// before w goes downstream (so what it emits is before w), and with
// MaxWatermark once all inputs ended. No key is current.
type WatermarkListener interface {
	OnWatermark(w int64, out Output) error
}

// SplitSource is implemented by sources that read several splits (Kafka
// partitions, datagen splits): with event time, each split gets its own
// watermark, and the subtask's is the minimum over its active splits, so a
// fast split does not make the records of a slow one late.
type SplitSource interface {
	// Splits appends the splits the subtask reads now (the values its
	// records carry in Record.Split) to dst. Called after Open and after
	// each Poll; a split that disappears ended (it no longer holds the
	// watermark back).
	Splits(dst []uint32) []uint32
}
