package kafka

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Figures published by the exactly-once sink (per subtask; info sums
// them). transactionCommitMs / transactionsCommitted is the mean commit
// latency.
const (
	gaugeCommitted      = "transactionsCommitted"   // counter
	gaugeAborted        = "transactionsAborted"     // counter: open ones aborted at close, pre-committed ones the broker aborted
	gaugeRecommitted    = "transactionsRecommitted" // counter: restored committables committed (or found committed)
	gaugeRewritten      = "transactionsRewritten"   // counter: restored committables the broker had aborted, whose records the restore wrote again
	gaugeCommitMs       = "transactionCommitMs"     // counter: time spent committing
	gaugeUnknown        = "transactionsUnknown"     // counter: outcomes the brokers could not tell within deliveryTimeout (each failed the attempt)
	gaugePendingTxns    = "pendingTransactions"     // pre-committed, waiting for their checkpoint
	textTransactionalID = "transactionalId"         // the id of the open (or last) transaction
)

func txnPlan(cfg sinkConfig, set txnSettings) *runtime.Plan {
	return &runtime.Plan{
		NewOperator:        func() runtime.Operator { return &txnSink{cfg: cfg, set: set, key: newKeyer(cfg.key)} },
		NeedsCheckpointing: "deliveryGuarantee: exactly-once commits its Kafka transactions when checkpoints complete",
		MinRetained:        minRetained,
	}
}

// txnSink adapts a txnWriter to the runtime's operator contract: Open
// with restored state re-commits and fences, SnapshotState pre-commits,
// NotifyCheckpointComplete commits. Every method runs on the subtask's
// goroutine (see runtime.Operator).
type txnSink struct {
	cfg   sinkConfig
	set   txnSettings
	ctx   *runtime.Context
	key   keyer
	arena runtime.Arena
	cl    *franzClient
	w     *txnWriter
	snap  poolEntry // of the last snapshot (DescribeState)
	seq   int64
}

var (
	_ runtime.Operator           = (*txnSink)(nil)
	_ runtime.Snapshotter        = (*txnSink)(nil)
	_ runtime.CheckpointListener = (*txnSink)(nil)
	_ runtime.StateDescriber     = (*txnSink)(nil)
)

func (s *txnSink) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	entries, err := restoredPools(ctx.OperatorState())
	if err != nil {
		return fmt.Errorf("restore kafka sink %q: %w", ctx.UID(), err)
	}
	s.cl, err = newFranzClient(franzConfig{brokers: s.cfg.brokers, topic: s.cfg.topic,
		transactionTimeout: s.set.timeout, deliveryTimeout: s.cfg.deliveryTimeout})
	if err != nil {
		return fmt.Errorf("kafka sink: %w", err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	err = s.cl.checkTopic(cctx)
	cancel()
	if err != nil {
		return fmt.Errorf("kafka sink: %w", err)
	}
	prefix := s.set.prefix
	if prefix == "" {
		prefix = defaultPrefix(ctx.JobID(), ctx.UID())
	}
	if err := s.claim(ctx, prefix, entries); err != nil {
		return fmt.Errorf("kafka sink %q: %w", ctx.UID(), err)
	}
	fire := func(point string, attrs ...any) error {
		return ctx.Fault(point, append([]any{ctx.UID(), ctx.Subtask()}, attrs...)...)
	}
	s.w = newTxnWriter(txnConfig{Prefix: prefix, Subtask: ctx.Subtask(), Parallelism: ctx.Parallelism(),
		PoolSize: s.set.poolSize, Timeout: s.cfg.deliveryTimeout}, s.cl, *ctx.Log(), fire, nil)
	end := s.watchStall("restoring the kafka transactions (commit the restored ones, fence the pool)")
	if entries != nil {
		err = s.w.Restore(entries)
	} else {
		err = s.w.Start()
	}
	end()
	s.publish()
	if err != nil {
		return err
	}
	st := s.w.Stats()
	ctx.Log().Info().Str("topic", s.cfg.topic).Str("transactional_id_prefix", prefix).Int("pool", s.set.poolSize).
		Int64("recommitted", st.Recommitted).Int64("rewritten", st.Rewritten).Msg("kafka exactly-once sink opened")
	return nil
}

// stallAfter is how long a commit or restore waits on the brokers before
// the sink shows it as a problem (info, dashboard).
const stallAfter = 2 * time.Second

// problemStall keys the sink's problem while it waits on the brokers.
const problemStall = "transactions"

// watchStall shows a problem if what is not over within stallAfter; the
// returned function ends the watch and clears the problem. Every wait it
// covers is bounded by deliveryTimeout, after which the job fails over.
func (s *txnSink) watchStall(what string) (end func()) {
	var mu sync.Mutex
	ended := false
	since := time.Now()
	t := time.AfterFunc(stallAfter, func() {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			s.ctx.Metrics().SetProblem(problemStall, fmt.Sprintf("%s since %s: brokers %v do not answer (each wait is bounded by deliveryTimeout %s, then the job fails over and its restore asks again)",
				what, since.Format(time.TimeOnly), s.cfg.brokers, s.cfg.deliveryTimeout))
		}
	})
	return func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		ended = true
		s.ctx.Metrics().ClearProblem(problemStall)
	}
}

// claim claims the sink's prefix and those of the snapshot it restores
// (see txnclaim.go).
func (s *txnSink) claim(ctx *runtime.Context, prefix string, entries []poolEntry) error {
	prefixes := []string{prefix}
	for _, e := range entries {
		if !slices.Contains(prefixes, e.Prefix) {
			prefixes = append(prefixes, e.Prefix)
		}
	}
	c := runtime.OutputClaim{Job: ctx.JobID(), JobName: ctx.JobName(), Operator: ctx.UID(), Restoring: entries != nil,
		RestoredJob: ctx.RestoredJobID(), AllowNonEmpty: ctx.AllowNonEmptyOutput()}
	cctx, cancel := context.WithTimeout(context.Background(), s.cfg.deliveryTimeout)
	defer cancel()
	return s.cl.claimPrefixes(cctx, prefixes, c)
}

// restoredPools decodes the restored pool entries (nil without state).
func restoredPools(st *state.OperatorState) ([]poolEntry, error) {
	items := st.Get(transactionsList)
	if items == nil {
		return nil, nil
	}
	entries := make([]poolEntry, 0, len(items))
	for _, it := range items {
		e, err := decodePoolEntry(it)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// Process writes a batch into the open transaction. Key and value are
// copied: the producer keeps them until the broker acknowledges them.
func (s *txnSink) Process(b *runtime.Batch, _ runtime.Output) error {
	if err := s.ctx.Fault("kafka.txn.write", s.ctx.UID(), s.ctx.Subtask()); err != nil {
		return err
	}
	for i := range b.Records {
		r := &b.Records[i]
		s.seq++
		key, err := s.key.of(r)
		if err != nil {
			return fmt.Errorf("kafka sink %q subtask %d, record %d: key: %w", s.ctx.UID(), s.ctx.Subtask(), s.seq, err)
		}
		if key != nil {
			key = s.arena.Copy(key)
		}
		if err := s.w.Write(key, s.arena.Copy(r.Value), r.Timestamp); err != nil {
			return fmt.Errorf("kafka sink: write to topic %q: %w", s.cfg.topic, err)
		}
	}
	return nil
}

// SnapshotState pre-commits and stores the pool with its committables.
func (s *txnSink) SnapshotState(id int64) error {
	e, err := s.w.PreCommit(id)
	if err != nil {
		return err
	}
	s.ctx.OperatorState().Set(transactionsList, state.Union, [][]byte{e.encode()})
	s.snap = e
	s.publish()
	return nil
}

// NotifyCheckpointComplete commits every transaction of checkpoints <= id.
func (s *txnSink) NotifyCheckpointComplete(id int64) error {
	defer s.watchStall(fmt.Sprintf("committing the kafka transactions of checkpoint %d", id))()
	err := s.w.Commit(id)
	s.publish()
	return err
}

// NotifyCheckpointAborted keeps the pre-committed transactions: the next
// completed checkpoint commits them (its id is larger).
func (s *txnSink) NotifyCheckpointAborted(id int64) {
	s.ctx.Log().Debug().Int64("checkpoint_id", id).Int("pending_transactions", s.w.Stats().Pending).
		Msg("checkpoint aborted; pre-committed kafka transactions wait for the next one")
}

func (s *txnSink) Close() error {
	if s.w != nil {
		s.w.Close()
		s.publish()
	}
	if s.cl != nil {
		s.cl.Close()
	}
	return nil
}

// DescribeState summarises the snapshot for savepoint inspect.
func (s *txnSink) DescribeState() map[string]any {
	pending := make([]map[string]any, 0, len(s.snap.Pending))
	for _, c := range s.snap.Pending {
		pending = append(pending, map[string]any{"checkpoint": c.Checkpoint, "transactionalId": c.ID,
			"producerId": c.ProducerID, "epoch": c.Epoch, "records": c.Records})
	}
	d := map[string]any{"transactionalIds": s.snap.ids(), "pendingTransactions": pending, "transactionTimeout": s.set.timeout.String()}
	if len(pending) > 0 {
		d[runtime.DetailExpiresAfter] = s.set.timeout.String()
	}
	return d
}

func (s *txnSink) publish() {
	if s.w == nil {
		return
	}
	st, m := s.w.Stats(), s.ctx.Metrics()
	m.Counter(gaugeCommitted).Store(st.Committed)
	m.Counter(gaugeAborted).Store(st.Aborted)
	m.Counter(gaugeRecommitted).Store(st.Recommitted)
	m.Counter(gaugeRewritten).Store(st.Rewritten)
	m.Counter(gaugeCommitMs).Store(st.CommitTime.Milliseconds())
	m.Counter(gaugeUnknown).Store(st.Unknown)
	m.Gauge(gaugePendingTxns).Store(int64(st.Pending))
	m.SetText(textTransactionalID, st.Current)
}
