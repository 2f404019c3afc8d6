package runtime

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Context is what a subtask gives its operator in Open: who it is, its
// state, and the daemon's resources. It is valid until Close returns and is
// used from the subtask's goroutine only (Metrics and Wakeup excepted).
type Context struct {
	o             ContextOptions
	skippedLogged int // records skipped by onError: skip and logged (RecordError)
}

// ContextOptions are the facts a Context reports, one field per accessor.
// The engine fills every field; an operator's test fills those its
// operator reads (Faults to inject failures, Stdout for a print-like sink,
// Keyed and State for a restore) and leaves the rest zero: a first run of
// subtask 0 of 1, not restored, without keyed state.
type ContextOptions struct {
	JobID, JobName string
	UID, Type      string
	Subtask        int
	Parallelism    int
	MaxParallelism int
	// Attempt counts restarts of the job (0 for the first run).
	Attempt int
	Log     zerolog.Logger
	// State is the operator state, holding the restored lists.
	State *state.OperatorState
	// Keyed is the keyed state backend; nil unless the operator's input is
	// keyed (it follows a keyBy).
	Keyed *state.KeyedBackend
	// Restored: the job started from a checkpoint or savepoint, the one
	// with id RestoredCheckpoint, taken by job RestoredJobID.
	Restored           bool
	RestoredCheckpoint int64
	RestoredJobID      string
	Checkpointing      api.CheckpointConfig
	// FS is the filesystem for state and output (vfs.Default when nil).
	FS vfs.FS
	// Stdout receives print output (the daemon's stdout and the job's .out
	// file); io.Discard when nil.
	Stdout io.Writer
	// Faults is the test hook behind Fault; nil in production.
	Faults FaultHook
	// AllowNonEmptyOutput: the user allowed the job to write into output
	// directories that hold other output or another job's ownership marker
	// (run --allow-non-empty-output; see OutputClaim).
	AllowNonEmptyOutput bool
	// JobEnded reports whether a job, by id, is known to have ended (nil:
	// none is; see OutputClaim.OwnerEnded).
	JobEnded func(job string) bool
	// Wakeup receives when the subtask has a control message to handle.
	Wakeup <-chan struct{}
	// Metrics receives the operator's own figures; a private set when nil.
	Metrics *Metrics
	// Timers is the timer service of an operator with keyed state (nil
	// otherwise).
	Timers Timers
	// Watermark reports the operator's current input watermark (nil:
	// MinWatermark, no event time).
	Watermark func() int64
	// Done is closed when the attempt is canceled (nil outside a job).
	Done <-chan struct{}
	// OnError is the operator's onError (api.OnErrorFail when empty),
	// which RecordError carries out.
	OnError string
	// RecordsIn counts the records the subtask received in this attempt,
	// the batch being processed included (nil: RecordError counts
	// positions within the batch only).
	RecordsIn *atomic.Int64
}

// NewContext returns a context reporting o.
func NewContext(o ContextOptions) *Context {
	if o.State == nil {
		o.State = state.NewOperatorState()
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Metrics == nil {
		o.Metrics = &Metrics{}
	}
	if o.Parallelism < 1 {
		o.Parallelism = 1
	}
	return &Context{o: o}
}

// JobID is the id of the job the operator runs in.
func (c *Context) JobID() string { return c.o.JobID }

// JobName is the job's name from its spec.
func (c *Context) JobName() string { return c.o.JobName }

// UID is the operator's uid from the spec: stable across restores, it is
// what state is matched by.
func (c *Context) UID() string { return c.o.UID }

// Type is the operator's type name.
func (c *Context) Type() string { return c.o.Type }

// Subtask is this instance's index, 0 to Parallelism-1.
func (c *Context) Subtask() int { return c.o.Subtask }

// Parallelism is the number of subtasks of the operator.
func (c *Context) Parallelism() int { return c.o.Parallelism }

// MaxParallelism is the job's number of key groups.
func (c *Context) MaxParallelism() int { return c.o.MaxParallelism }

// Attempt counts the job's restarts (0 for the first run).
func (c *Context) Attempt() int { return c.o.Attempt }

// Log is the operator's logger (job, operator and subtask fields set).
func (c *Context) Log() *zerolog.Logger { return &c.o.Log }

// Metrics is where the operator publishes its own figures.
func (c *Context) Metrics() *Metrics { return c.o.Metrics }

// OperatorState holds the operator's lists of opaque items (a source's
// positions, a sink's committables): restored lists are there at Open; the
// operator replaces them in SnapshotState. Encode items with
// state.NewEncoder so that corruption and versions are handled alike.
func (c *Context) OperatorState() *state.OperatorState { return c.o.State }

// Restored reports whether the job started from a checkpoint or savepoint
// (OperatorState may still be empty for an operator new to the job).
func (c *Context) Restored() bool { return c.o.Restored }

// RestoredCheckpoint is the id of the snapshot restored from (0: none).
func (c *Context) RestoredCheckpoint() int64 { return c.o.RestoredCheckpoint }

// RestoredJobID is the job that took the snapshot restored from ("": none).
func (c *Context) RestoredJobID() string { return c.o.RestoredJobID }

// AllowNonEmptyOutput reports whether the user let the job write into
// output directories that hold other output (see OutputClaim).
func (c *Context) AllowNonEmptyOutput() bool { return c.o.AllowNonEmptyOutput }

// JobEnded reports whether the job with id job is known to have ended
// (canceled, failed or finished in this daemon); false when unknown. A sink
// passes it to OutputClaim.OwnerEnded.
func (c *Context) JobEnded(job string) bool { return c.o.JobEnded != nil && c.o.JobEnded(job) }

// Checkpointing is the job's resolved checkpoint configuration.
func (c *Context) Checkpointing() api.CheckpointConfig { return c.o.Checkpointing }

// FS is the filesystem every file an operator writes must go through, so
// tests can crash it at any step (see vfs.MemFS) or inject faults.
func (c *Context) FS() vfs.FS { return c.o.FS }

// Stdout is where print-like sinks write: the daemon's stdout and the job's
// .out file.
func (c *Context) Stdout() io.Writer { return c.o.Stdout }

// Wakeup receives when the subtask has a control message waiting (a
// checkpoint trigger, a notification): a Poll that waits for data should
// return early when it fires, so barriers are not delayed.
func (c *Context) Wakeup() <-chan struct{} { return c.o.Wakeup }

// Done is closed when the attempt is canceled (a failover, cancel or stop):
// an operator blocked in Open (retrying a broker, say) or in Poll returns.
// Nil outside a job.
func (c *Context) Done() <-chan struct{} { return c.o.Done }

// Fault consults the test fault hook at a named point: it returns the error
// to fail with, or nil (always nil in production). Name points
// "<type>.<step>" and pass the uid and subtask as the first attributes.
func (c *Context) Fault(point string, attrs ...any) error {
	if c.o.Faults == nil {
		return nil
	}
	return c.o.Faults.Fire(point, attrs...)
}

// FaultsArmed reports whether a fault hook is installed, so a hot path can
// skip building the attributes of Fault.
func (c *Context) FaultsArmed() bool { return c.o.Faults != nil }

// Timers is the operator's timer service: nil unless it keeps keyed state
// (Plan.KeyedInput or Plan.GlobalKey). Fired timers reach OnTimer
// (TimerListener).
func (c *Context) Timers() Timers { return c.o.Timers }

// RestoredKeyedState reports whether the operator's restored state has a
// keyed state table called name (at Open, before it is declared: whether
// the snapshot was written with it).
func (c *Context) RestoredKeyedState(name string) bool {
	return c.o.Keyed != nil && c.o.Keyed.Restored(name)
}

// CurrentWatermark is the operator's input watermark: the minimum over its
// live, active inputs (MinWatermark before the first watermark). A record
// whose Timestamp is at or below it is late.
func (c *Context) CurrentWatermark() int64 {
	if c.o.Watermark == nil {
		return MinWatermark
	}
	return c.o.Watermark()
}

// ErrNotKeyed is returned when keyed state is declared by an operator whose
// input is not keyed (its Plan lacks KeyedInput, or it does not follow a
// keyBy).
var ErrNotKeyed = errors.New("keyed state needs a keyed input: set Plan.KeyedInput and read from a keyBy")

// SetCurrentKey selects the key that keyed state handles read and write:
// call it with each record's Key before touching keyed state. The key must
// be one routed to this subtask (every record's Key is).
func (c *Context) SetCurrentKey(key []byte) {
	if c.o.Keyed == nil {
		panic(ErrNotKeyed)
	}
	c.o.Keyed.SetCurrentKey(key)
}

// CurrentKey returns the key set by SetCurrentKey.
func (c *Context) CurrentKey() []byte {
	if c.o.Keyed == nil {
		return nil
	}
	return c.o.Keyed.CurrentKey()
}

// keyed returns the keyed backend, or ErrNotKeyed.
func (c *Context) keyed() (*state.KeyedBackend, error) {
	if c.o.Keyed == nil {
		return nil, ErrNotKeyed
	}
	return c.o.Keyed, nil
}
