package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// txnProducer writes the transactions of one transactional id. Its
// methods are called by the txnWriter, one at a time; the implementation
// may acknowledge records on its own goroutines.
type txnProducer interface {
	// Begin opens a transaction. The first Begin of a producer registers
	// its id with the broker (InitProducerID), which aborts what an earlier
	// holder of the id left open and fences that holder.
	Begin() error
	// Write queues a record of the open transaction, blocking while the
	// producer's buffer is full. An error is the first failed write: the
	// transaction cannot commit.
	Write(key, value []byte, timestamp int64) error
	// WriteTo is Write into the given partition (a rewrite keeps the
	// partitions the records had; Write partitions by key).
	WriteTo(partition int32, key, value []byte, timestamp int64) error
	// Flush waits until every record written is acknowledged and returns
	// the open transaction as a committable (Checkpoint unset). The
	// transaction stays open.
	Flush(ctx context.Context) (committable, error)
	// Commit commits the flushed transaction. An error leaves the outcome
	// unknown here (the caller asks txnClient.Finish) and the producer
	// unusable.
	Commit(ctx context.Context) error
	// Abort aborts the open transaction, best effort (Close).
	Abort(ctx context.Context) error
	// Reusable reports whether the next transaction can run on this
	// producer after c committed: only if the broker moved the epoch on
	// (KIP-890), so that no two transactions share a producer id and
	// epoch (which is what makes a committable name one transaction).
	Reusable(c committable) bool
	Close()
}

// txnClient is the broker side of the txnWriter: producers by
// transactional id and the requests that need no producer.
type txnClient interface {
	NewProducer(id string) (txnProducer, error)
	// Fence bumps the epoch of each id (InitProducerID): an open
	// transaction of the id is aborted and whoever still holds the old
	// epoch can neither write nor commit any more. With mark, it also
	// writes an abort marker of each id into every partition (a restore:
	// see franzClient.markAborted).
	Fence(ctx context.Context, ids []string, mark bool) error
	// Finish commits c if it is still open and reports its outcome:
	// committed (now or before), or aborted (by the broker, a fence or an
	// abort). An error means the outcome is unknown (broker unreachable,
	// records gone from the log): the caller fails and tries again later.
	Finish(ctx context.Context, c committable) (committed bool, err error)
	// ReadAborted hands fn the records of c, a transaction Finish found
	// aborted, read back from the log (see txnrewrite.go). Records no
	// longer there are an error wrapping errRecordsGone.
	ReadAborted(ctx context.Context, c committable, fn func(partition int32, key, value []byte, timestamp int64) error) error
	Close()
}

// txnConfig is what a txnWriter needs to know.
type txnConfig struct {
	Prefix      string // transactional ids are Prefix-Subtask-k, k < PoolSize
	Subtask     int
	Parallelism int
	PoolSize    int
	Timeout     time.Duration // bound of one flush, commit or fence (deliveryTimeout)
}

// slot is one transactional id of the pool.
type slot struct {
	k            int
	id           string
	p            txnProducer // nil until used, and after a commit that did not move the epoch
	records      int64       // written in the open transaction
	precommitted bool        // flushed at a barrier, waiting for its checkpoint
	c            committable // while precommitted
}

func (s *slot) busy() bool { return s.records > 0 || s.precommitted }

// txnWriter is one sink subtask's two-phase commit over Kafka transactions
// (Flink's TwoPhaseCommitSinkFunction with a pool of transactional ids). It
// knows nothing of the runtime: the Kafka client, the clock and the fault
// hook are passed in, so tests drive it directly.
//
// Records go into the open transaction of one id of the pool. At barrier
// n, PreCommit flushes it and returns it as a committable for the
// snapshot; the next record opens a transaction on a free id. When
// checkpoint n completes, Commit commits every pre-committed transaction
// of checkpoints <= n, oldest first. An empty transaction is never
// pre-committed nor committed: a barrier without records since the last
// one leaves nothing to commit.
//
// Lifecycle: newTxnWriter, then Start (fresh) or Restore, then any sequence
// of Write, PreCommit, Commit, and Close. Not safe for concurrent use; an
// error from any method leaves the writer unusable except for Close (the
// job fails over and a new writer restores).
type txnWriter struct {
	cfg  txnConfig
	cl   txnClient
	fire FireFunc
	now  func() time.Time
	log  zerolog.Logger

	slots   []*slot
	cur     *slot   // the slot receiving records, nil between a barrier and the next record
	pending []*slot // pre-committed, oldest checkpoint first
	stats   txnStats
}

// FireFunc is the fault-injection hook (engine.Env.Fire with the
// operator's uid and subtask bound).
type FireFunc func(point string, attrs ...any) error

// txnStats are the writer's figures (gauges, info, inspect).
type txnStats struct {
	Committed, Aborted, Recommitted int64
	Rewritten                       int64         // aborted transactions whose records a restore wrote again (rewrite)
	Unknown                         int64         // outcomes the brokers could not tell (errOutcomeUnknown)
	CommitTime                      time.Duration // spent in commits, in all
	Pending                         int
	Current                         string // the id of the open transaction, or the last one used
}

func newTxnWriter(cfg txnConfig, cl txnClient, log zerolog.Logger, fire FireFunc, now func() time.Time) *txnWriter {
	if fire == nil {
		fire = func(string, ...any) error { return nil }
	}
	if now == nil {
		now = time.Now
	}
	w := &txnWriter{cfg: cfg, cl: cl, fire: fire, now: now, log: log}
	for k := range cfg.PoolSize {
		w.slots = append(w.slots, &slot{k: k, id: txnID(cfg.Prefix, cfg.Subtask, k)})
	}
	return w
}

func (w *txnWriter) own() poolEntry {
	return poolEntry{Prefix: w.cfg.Prefix, Subtask: w.cfg.Subtask, Size: w.cfg.PoolSize}
}

func (w *txnWriter) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), w.cfg.Timeout)
}

// Start begins without restored state: it fences the own pool, which
// aborts what an earlier attempt of the job left open.
func (w *txnWriter) Start() error { return w.fence(nil, false, nil) }

// Restore takes over the entries of the old subtasks this subtask
// replaces: it fences the ids of their pools and its own that hold no
// transaction to commit, commits their pre-committed transactions
// (already committed ones are fine), then fences the ids of those, in
// this order: a fence would abort the transactions to commit, and reading
// a transaction's outcome waits for the transactions open before it in
// its partition to end, which the first fence does for what the failed
// attempt left open (every subtask's restore fences its own first).
// Last, the records of the transactions the broker aborted are written
// again (rewrite), after the fences, which would abort the rewrite.
func (w *txnWriter) Restore(entries []poolEntry) error {
	pools, pending := takeOver(entries, w.cfg.Subtask, w.cfg.Parallelism)
	if err := w.fire("kafka.txn.recover", len(pending)); err != nil {
		return err
	}
	toCommit := func(id string) bool {
		return slices.ContainsFunc(pending, func(c committable) bool { return c.ID == id })
	}
	if err := w.fence(pools, true, func(id string) bool { return !toCommit(id) }); err != nil {
		return err
	}
	var aborted []committable
	for _, c := range pending {
		committed, err := w.finish(c)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if !committed {
			w.stats.Aborted++
			aborted = append(aborted, c)
			continue
		}
		w.stats.Recommitted++
	}
	if err := w.fence(pools, true, toCommit); err != nil {
		return err
	}
	return w.rewrite(aborted)
}

// rewrite writes the records of the aborted transactions again, read back
// from the log, as the first records of the restored writer's open
// transaction, each into the partition it had: the next barrier
// pre-commits them with what follows, and the checkpoint completing
// commits them, its snapshot naming the transaction like any other. Why
// not commit them at once: the job may fail again before that checkpoint
// and restore the same snapshot, which knows nothing of the rewrite and
// would write the records a third time; left open, the rewrite is aborted
// by that restore's fence of the pool instead (see txnrewrite.go). It
// takes no id of the pool beyond the open transaction's. Records no longer
// in the topic are a RestoreBeforeError: the job replays them from the
// snapshot before (other subtasks' committed parts of that checkpoint are
// then written again: the one case left where this sink duplicates).
func (w *txnWriter) rewrite(aborted []committable) error {
	if len(aborted) == 0 {
		return nil
	}
	if err := w.open(); err != nil {
		return err
	}
	s := w.cur
	ctx, cancel := w.ctx()
	defer cancel()
	for _, c := range aborted {
		w.log.Warn().Str("transactional_id", c.ID).Int64("checkpoint_id", c.Checkpoint).Int64("records", c.Records).Str("into", s.id).
			Msg("kafka transaction aborted by the broker before its commit; writing its records again from the topic")
		err := w.cl.ReadAborted(ctx, c, func(part int32, key, value []byte, ts int64) error {
			s.records++
			return s.p.WriteTo(part, key, value, ts)
		})
		if errors.Is(err, errRecordsGone) {
			return w.lost(c, err) // Close aborts what was written
		}
		if err != nil {
			return fmt.Errorf("kafka sink: restore: write %s again: %w", c, err)
		}
	}
	w.stats.Rewritten += int64(len(aborted))
	return nil
}

// finish asks the broker to commit c and for its outcome.
func (w *txnWriter) finish(c committable) (bool, error) {
	ctx, cancel := w.ctx()
	defer cancel()
	committed, err := w.cl.Finish(ctx, c)
	if errors.Is(err, errOutcomeUnknown) {
		w.stats.Unknown++
	}
	if err != nil {
		return false, fmt.Errorf("commit %s: %w", c, err)
	}
	return committed, nil
}

// lost reports an aborted pre-committed transaction whose records cannot
// be written again (why): they are not in the topic, and the
// checkpoint's source positions are past them.
func (w *txnWriter) lost(c committable, why error) error {
	return &runtime.RestoreBeforeError{Checkpoint: c.Checkpoint, Err: fmt.Errorf(
		"kafka sink: %s was aborted by the broker before it could be committed (transaction timeout exceeded, a broker crash, or fenced by another producer with the same transactional id), and cannot be written again: %w", c, why)}
}

// fence fences the ids of pools and the own pool that only keeps (nil:
// all), with abort markers if mark.
func (w *txnWriter) fence(pools []poolEntry, mark bool, only func(id string) bool) error {
	var ids []string
	for _, e := range append(pools, w.own()) {
		for _, id := range e.ids() {
			if !slices.Contains(ids, id) && (only == nil || only(id)) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := w.ctx()
	defer cancel()
	if err := w.cl.Fence(ctx, ids, mark); err != nil {
		return fmt.Errorf("fence transactional ids: %w", err)
	}
	return nil
}

// Write adds a record to the open transaction, opening one on a free id
// of the pool when there is none.
func (w *txnWriter) Write(key, value []byte, timestamp int64) error {
	if w.cur == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	w.cur.records++
	return w.cur.p.Write(key, value, timestamp)
}

func (w *txnWriter) open() error {
	var s *slot
	for _, c := range w.slots {
		if !c.busy() {
			s = c
			break
		}
	}
	if s == nil {
		return fmt.Errorf("kafka sink: all %d transactional ids of subtask %d hold transactions waiting for a checkpoint to complete; raise transactionalIdPoolSize (or look at why checkpoints fail)", len(w.slots), w.cfg.Subtask)
	}
	if s.p == nil {
		p, err := w.cl.NewProducer(s.id)
		if err != nil {
			return fmt.Errorf("kafka sink: producer for transactional id %s: %w", s.id, err)
		}
		s.p = p
	}
	if err := s.p.Begin(); err != nil {
		return fmt.Errorf("kafka sink: begin a transaction on %s: %w", s.id, err)
	}
	w.cur = s
	w.stats.Current = s.id
	return nil
}

// PreCommit is the first phase at barrier id: flush the open transaction
// (if it has records) and attach it to checkpoint id. It returns the
// entry to store in the snapshot.
func (w *txnWriter) PreCommit(id int64) (poolEntry, error) {
	if err := w.fire("kafka.txn.precommit", id); err != nil {
		return poolEntry{}, err
	}
	if s := w.cur; s != nil {
		ctx, cancel := w.ctx()
		c, err := s.p.Flush(ctx)
		cancel()
		if err != nil {
			return poolEntry{}, fmt.Errorf("kafka sink: flush transaction %s for checkpoint %d: %w", s.id, id, err)
		}
		c.Checkpoint = id
		s.c, s.precommitted, s.records = c, true, 0
		w.pending = append(w.pending, s)
		w.cur = nil
	}
	return w.snapshot(), nil
}

func (w *txnWriter) snapshot() poolEntry {
	e := w.own()
	for _, s := range w.pending {
		e.Pending = append(e.Pending, s.c)
	}
	return e
}

// Commit is the second phase: checkpoint id completed, so every
// transaction pre-committed at a checkpoint <= id is committed, oldest
// first; later ones wait. A transaction the broker aborted, or one whose
// outcome is unknown, is an error: the job fails over, and the restore of
// the latest checkpoint, which names the transaction, commits it or
// writes its records again.
func (w *txnWriter) Commit(id int64) error {
	for len(w.pending) > 0 && w.pending[0].c.Checkpoint <= id {
		s := w.pending[0]
		if err := w.fire("kafka.txn.commit", id, s.id); err != nil {
			return err
		}
		start := w.now()
		if err := w.commit(s); err != nil {
			return err
		}
		w.stats.Committed++
		w.stats.CommitTime += w.now().Sub(start)
		w.pending = w.pending[1:]
		s.precommitted = false
		if s.p != nil && !s.p.Reusable(s.c) { // nil: closed after a failed commit
			s.p.Close()
			s.p = nil
		}
	}
	return w.fire("kafka.txn.committed", id)
}

// commit commits s's transaction; when the producer fails to, the broker
// is asked for the outcome (one rule with restore: txnClient.Finish).
func (w *txnWriter) commit(s *slot) error {
	ctx, cancel := w.ctx()
	err := s.p.Commit(ctx)
	cancel()
	if err == nil {
		return nil
	}
	w.log.Warn().Err(err).Str("transactional_id", s.id).Int64("checkpoint_id", s.c.Checkpoint).
		Msg("kafka transaction commit not confirmed; reading its outcome")
	s.p.Close()
	s.p = nil
	committed, ferr := w.finish(s.c)
	switch {
	case ferr != nil:
		return fmt.Errorf("kafka sink: %w (first attempt: %v)", ferr, err)
	case !committed:
		w.stats.Aborted++
		return fmt.Errorf("kafka sink: %s was aborted by the broker before it could be committed (transaction timeout exceeded, a broker crash, or fenced by another producer with the same transactional id); the job fails over and its restore writes the records again from the topic", s.c)
	}
	return nil
}

// Close aborts the open transaction (its records follow the last barrier:
// a restore writes them again) and releases the producers. Pre-committed
// transactions are left open for the restore to commit.
func (w *txnWriter) Close() {
	if s := w.cur; s != nil && s.p != nil {
		ctx, cancel := context.WithTimeout(context.Background(), min(closeGrace, w.cfg.Timeout))
		if err := s.p.Abort(ctx); err != nil {
			w.log.Warn().Err(err).Str("transactional_id", s.id).Msg("kafka transaction not aborted at close (the next start fences it)")
		} else {
			w.stats.Aborted++
		}
		cancel()
		w.cur = nil
	}
	for _, s := range w.slots {
		if s.p != nil {
			s.p.Close()
			s.p = nil
		}
	}
}

// Stats returns the writer's figures.
func (w *txnWriter) Stats() txnStats {
	st := w.stats
	st.Pending = len(w.pending)
	return st
}
