package file

import (
	"errors"
	"fmt"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// sink adapts a Writer to the runtime's operator contract. Every method
// runs on the subtask's goroutine (see runtime.Operator).
type sink struct {
	set      *settings
	ctx      *runtime.Context
	w        *writer
	bucketer *bucketer
}

var (
	_ runtime.Operator           = (*sink)(nil)
	_ runtime.Snapshotter        = (*sink)(nil)
	_ runtime.CheckpointListener = (*sink)(nil)
	_ runtime.Finisher           = (*sink)(nil)
	_ runtime.StateDescriber     = (*sink)(nil)
)

// Open restores the writer from ctx.OperatorState() (re-commit, resume, clean up)
// or starts it fresh.
func (s *sink) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	b, err := newBucketer(s.set.bucket, s.set.loc)
	if err != nil {
		return fmt.Errorf("bug: bucket validated at configure: %w", err)
	}
	s.bucketer = b
	fire := func(point string, attrs ...any) error {
		return ctx.Fault(point, append([]any{ctx.UID(), ctx.Subtask()}, attrs...)...)
	}
	cfg := config{Dir: s.set.dir, Subtask: ctx.Subtask(), Parallelism: ctx.Parallelism(), Naming: s.set.naming,
		Policy: s.set.policy, Format: s.set.format, CSV: s.set.csv, Bulk: s.set.bulk, MaxOpen: s.set.maxOpen}
	restored, ok, err := getState(ctx.OperatorState())
	if err != nil {
		return err
	}
	// Claim the directory before touching anything in it: a job that may
	// not write there must not delete another's files either.
	claim := runtime.OutputClaim{Job: ctx.JobID(), JobName: ctx.JobName(), Operator: ctx.UID(),
		Restoring: ok, RestoredJob: ctx.RestoredJobID(), AllowNonEmpty: ctx.AllowNonEmptyOutput(),
		OwnerEnded: ctx.JobEnded}
	if err := runtime.ClaimOutput(ctx.FS(), s.set.dir, claim); err != nil {
		if errors.Is(err, runtime.ErrOutputOwned) || errors.Is(err, runtime.ErrOutputNotEmpty) || runtime.PathRefused(err) {
			err = runtime.SuppressRestarts(err)
		}
		return err
	}
	s.w = newWriter(ctx.FS(), cfg, *ctx.Log(), fire)
	if ok {
		err = s.w.Restore(restored, time.Now())
	} else {
		err = s.w.Start()
	}
	s.publish()
	if runtime.PathRefused(err) {
		// The output path cannot be written (permission denied, not a
		// directory, read-only): a restart cannot fix it.
		err = runtime.SuppressRestarts(err)
	}
	return err
}

// Process writes a batch into the buckets' in-progress files. A record
// that does not fit the parquet columns goes to onError (fail, skip or
// the errors side output) and the batch goes on.
func (s *sink) Process(b *runtime.Batch, out runtime.Output) error {
	if err := s.ctx.Fault("file.write", s.ctx.UID(), s.ctx.Subtask()); err != nil {
		return err
	}
	now := time.Now()
	nowMs := now.UnixMilli()
	recs := b.Records
	if !s.set.eventTime {
		id := s.bucketer.ID(nowMs)
		for i := range recs {
			if err := s.w.Write(id, &recs[i], now); err != nil {
				if err = s.recordError(b, i, out, err); err != nil {
					return err
				}
			}
		}
		return s.flushAndTick(now)
	}
	for i := range recs {
		ts := recs[i].Timestamp
		if ts == 0 {
			ts = nowMs // no event time: bucket by processing time
		}
		if err := s.w.Write(s.bucketer.ID(ts), &recs[i], now); err != nil {
			if err = s.recordError(b, i, out, err); err != nil {
				return err
			}
		}
	}
	return s.flushAndTick(now)
}

// flushAndTick ends a Process call: the parquet rows collected from the
// batch's records are written before the records go away, then the
// time-based rolling policy applies.
func (s *sink) flushAndTick(now time.Time) error {
	if err := s.w.FlushRows(); err != nil {
		return err
	}
	return s.w.Tick(now)
}

// recordError passes a record the format cannot write (a csv row of a
// value that is not a JSON object; a record that does not fit the parquet
// columns) to the operator's onError (fail, skip, or the errors side
// output through out); any other error is the file's and fails the
// subtask.
func (s *sink) recordError(b *runtime.Batch, i int, out runtime.Output, err error) error {
	var bad *recordError
	if !errors.As(err, &bad) {
		return err
	}
	return s.ctx.RecordError(b, i, out, bad.err)
}

// SnapshotState pre-commits and stores the committables.
func (s *sink) SnapshotState(id int64) error {
	snap, err := s.w.PreCommit(id, time.Now())
	if err != nil {
		return err
	}
	putState(s.ctx.OperatorState(), snap)
	s.publish()
	return nil
}

// NotifyCheckpointComplete commits every pending file of checkpoints <= id.
func (s *sink) NotifyCheckpointComplete(id int64) error {
	err := s.w.Commit(id)
	s.publish()
	return err
}

// NotifyCheckpointAborted keeps the pending files: the next completed
// checkpoint commits them (its id is larger).
func (s *sink) NotifyCheckpointAborted(id int64) {
	s.ctx.Log().Debug().Int64("checkpoint_id", id).Int64("pending_files", s.w.Stats().Pending).
		Msg("checkpoint aborted; pending part files wait for the next one")
}

// Finish rolls every open file; the final checkpoint commits them.
func (s *sink) Finish(runtime.Output) error { return s.w.FinishAll() }

// PrepareStop rolls every open file before a stop-with-savepoint, which
// then commits them: everything written before `flinkgo stop` is visible
// once it returns, and a job restored from the savepoint starts new parts.
func (s *sink) PrepareStop(int64) error {
	err := s.w.FinishAll()
	s.publish()
	return err
}

func (s *sink) Close() error {
	if s.w == nil {
		return nil
	}
	return s.w.Close()
}

// DescribeState summarises the snapshot for savepoint inspect.
func (s *sink) DescribeState() map[string]any {
	st := s.w.Stats()
	return map[string]any{"pendingFiles": st.Pending, "inProgressFiles": st.Open, "nextPart": st.NextPart}
}

func (s *sink) publish() {
	if s.ctx.Metrics() == nil || s.w == nil {
		return
	}
	st := s.w.Stats()
	s.ctx.Metrics().Gauge("openFiles").Store(st.Open)
	s.ctx.Metrics().Gauge("pendingFiles").Store(st.Pending)
	s.ctx.Metrics().Gauge("committedFiles").Store(st.Committed)
}
