package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// franzConfig configures the franz-go side of the exactly-once sink.
type franzConfig struct {
	brokers            []string
	topic              string
	transactionTimeout time.Duration
	deliveryTimeout    time.Duration
	// extra client options (tests: MaxVersions to emulate an older broker).
	extra []kgo.Opt
}

// franzClient implements txnClient with franz-go (kgo): segmentio/kafka-go
// has no transactional producer. One per sink subtask; its admin client
// sends the requests that need no producer (fence, finish, metadata).
type franzClient struct {
	cfg   franzConfig
	admin *kgo.Client
}

func newFranzClient(cfg franzConfig) (*franzClient, error) {
	admin, err := kgo.NewClient(append(cfg.base(), kgo.MaxVersions(adminVersions()))...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for brokers %v: %w", cfg.brokers, err)
	}
	return &franzClient{cfg: cfg, admin: admin}, nil
}

// adminVersions caps AddPartitionsToTxn at the client version, and the
// offset requests of the owner marker (txnclaim.go) below the versions
// that name topics by id.
func adminVersions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.AddPartitionsToTxn.Int16(), addPartitionsVersion)
	v.SetMaxKeyVersion(kmsg.OffsetCommit.Int16(), 9)
	v.SetMaxKeyVersion(kmsg.OffsetFetch.Int16(), 9)
	return v
}

func (cfg franzConfig) base() []kgo.Opt {
	return append([]kgo.Opt{kgo.SeedBrokers(cfg.brokers...), kgo.ClientID(clientID),
		kgo.DialTimeout(requestTimeout), kgo.RetryTimeout(requestTimeout)}, cfg.extra...)
}

func (c *franzClient) Close() { c.admin.Close() }

// checkTopic fails fast on a missing topic, which producers would retry:
// the job fails without restarts (topicMissing), as with the source.
func (c *franzClient) checkTopic(ctx context.Context) error {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(c.cfg.topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, c.admin)
	if err != nil {
		return fmt.Errorf("read metadata of topic %q from brokers %v: %w", c.cfg.topic, c.cfg.brokers, err)
	}
	for _, rt := range resp.Topics {
		if rt.Topic == nil || *rt.Topic != c.cfg.topic {
			continue
		}
		switch err := kerr.ErrorForCode(rt.ErrorCode); {
		case err == nil:
			return nil
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return topicMissing(c.cfg.topic, c.cfg.brokers)
		default:
			return fmt.Errorf("read metadata of topic %q: %w", c.cfg.topic, err)
		}
	}
	return topicMissing(c.cfg.topic, c.cfg.brokers)
}

// retriable answers of the transaction coordinator: busy finishing an
// earlier transaction, loading its state, or moved.
func retriable(err error) bool {
	return errors.Is(err, kerr.ConcurrentTransactions) || errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable) ||
		errors.Is(err, kerr.RequestTimedOut)
}

// retry calls fn until it returns something else than a retriable error
// or ctx ends.
func retry(ctx context.Context, fn func() error) error {
	backoff := 10 * time.Millisecond
	for {
		err := fn()
		if !retriable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last answer: %v)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// Fence sends InitProducerID for each id, then, with mark, closes the
// id's history with an abort marker in every partition of the topic
// (markAborted).
func (c *franzClient) Fence(ctx context.Context, ids []string, mark bool) error {
	var parts []int32
	if mark {
		var err error
		if parts, err = c.partitions(ctx); err != nil {
			return err
		}
	}
	for _, id := range ids {
		var pid int64
		var epoch int16
		err := retry(ctx, func() error {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID = kmsg.StringPtr(id)
			req.TransactionTimeoutMillis = int32(c.cfg.transactionTimeout / time.Millisecond)
			req.ProducerID, req.ProducerEpoch = -1, -1
			resp, err := req.RequestWith(ctx, c.admin)
			if err != nil {
				return err
			}
			pid, epoch = resp.ProducerID, resp.ProducerEpoch
			return kerr.ErrorForCode(resp.ErrorCode)
		})
		if errors.Is(err, kerr.InvalidTransactionTimeout) {
			return fmt.Errorf("%s: the brokers refuse transactionTimeout %s (above their transaction.max.timeout.ms): lower transactionTimeout, or raise transaction.max.timeout.ms on the brokers and transactionMaxTimeout: %w", id, c.cfg.transactionTimeout, err)
		}
		if err == nil && mark {
			err = c.markAborted(ctx, id, pid, epoch, parts)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
	}
	return nil
}

// markAborted runs an empty transaction on the fenced id over every
// partition and aborts it, which writes an abort marker of the id's
// producer into each. Why: a broker that crashed with a transaction open
// may abort it without a marker (kfake does: its log replay lists it as
// aborted, but writes nothing). A read_committed reader that meets an
// aborted transaction skips the producer's records until its next abort
// marker, and the producer id stays the same across fences, so without
// one it would skip every later committed transaction of the id: the
// job's output would seem to stop. The marker ends that skipping before
// the id writes again.
func (c *franzClient) markAborted(ctx context.Context, id string, pid int64, epoch int16, parts []int32) error {
	err := retry(ctx, func() error {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = addPartitionsVersion
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
		t := kmsg.NewAddPartitionsToTxnRequestTopic()
		t.Topic, t.Partitions = c.cfg.topic, parts
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, c.admin)
		if err != nil {
			return err
		}
		for _, rt := range resp.Topics {
			for _, p := range rt.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add partitions to an empty transaction: %w", err)
	}
	err = retry(ctx, func() error {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, false
		resp, err := req.RequestWith(ctx, c.admin)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	})
	if err != nil {
		return fmt.Errorf("abort an empty transaction: %w", err)
	}
	return nil
}

// addPartitionsVersion is the highest AddPartitionsToTxn version a client
// sends (v4 and up are for brokers); the admin client is pinned to it.
const addPartitionsVersion = 3

// partitions lists the topic's partitions.
func (c *franzClient) partitions(ctx context.Context) ([]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(c.cfg.topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, c.admin)
	if err != nil {
		return nil, fmt.Errorf("read metadata of topic %q: %w", c.cfg.topic, err)
	}
	var out []int32
	for _, rt := range resp.Topics {
		if rt.Topic != nil && *rt.Topic == c.cfg.topic {
			for _, p := range rt.Partitions {
				out = append(out, p.Partition)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %q has no partitions on brokers %v", c.cfg.topic, c.cfg.brokers)
	}
	slices.Sort(out)
	return out, nil
}

// Finish sends EndTxn(commit) with the committable's producer id and
// epoch, which commits exactly that transaction if it is still open, and
// then reads the outcome from the log (outcomeFromLog), whatever the
// answer: a success may be the broker's answer to a retry of an earlier
// commit on the id (KIP-890 retry detection) by a broker that lost this
// transaction in a crash, and a refusal (a newer epoch, another outcome,
// an id the broker forgot) says nothing by itself. A transaction still
// open after half the bound is fenced (InitProducerID aborts it, or waits
// for a commit in progress) and read again: an open transaction would
// otherwise keep its outcome unknown for as long as the broker keeps it.
// Everything is bounded by ctx; an outcome not known by then is an error
// wrapping errOutcomeUnknown.
func (c *franzClient) Finish(ctx context.Context, cm committable) (bool, error) {
	err := retry(ctx, func() error {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = cm.ID, cm.ProducerID, cm.Epoch, true
		resp, err := req.RequestWith(ctx, c.admin)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	})
	if err != nil && !refusal(err) {
		return false, fmt.Errorf("%w: %s: EndTxn: %w", errOutcomeUnknown, cm, err)
	}
	hctx, cancel := halfway(ctx)
	o, err := c.outcomeFromLog(hctx, cm)
	cancel()
	if err == nil && o == outcomeOpen {
		if ferr := c.Fence(ctx, []string{cm.ID}, true); ferr != nil {
			return false, fmt.Errorf("%w: %s is still open and could not be fenced: %w", errOutcomeUnknown, cm, ferr)
		}
		o, err = c.outcomeFromLog(ctx, cm)
	}
	switch {
	case err != nil:
		return false, err
	case o == outcomeOpen:
		return false, fmt.Errorf("%w: %s is still open after it was fenced", errOutcomeUnknown, cm)
	}
	return o == outcomeCommitted, nil
}

// refusal: the coordinator refused EndTxn for this producer id and epoch
// (the transaction is no longer the id's open one).
func refusal(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.InvalidTxnState) || errors.Is(err, kerr.InvalidProducerIDMapping) ||
		errors.Is(err, kerr.TransactionalIDNotFound)
}

// halfway returns a context ending halfway to ctx's deadline (ctx itself
// without one).
func halfway(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, time.Now().Add(time.Until(d)/2))
}

// NewProducer returns a transactional producer for id.
func (c *franzClient) NewProducer(id string) (txnProducer, error) {
	p := &franzProducer{id: id, topic: c.cfg.topic, first: map[int32]int64{}, deliveryTimeout: c.cfg.deliveryTimeout}
	p.promise = p.acked
	cl, err := kgo.NewClient(append(c.cfg.base(),
		kgo.TransactionalID(id), kgo.TransactionTimeout(c.cfg.transactionTimeout),
		kgo.DefaultProduceTopic(c.cfg.topic), kgo.MaxBufferedRecords(maxInFlight), kgo.WithHooks(disturbHook{p}),
		kgo.RecordPartitioner(pinningPartitioner{kgo.UniformBytesPartitioner(64<<10, true, true, nil)}))...)
	if err != nil {
		return nil, err
	}
	p.cl = cl
	return p, nil
}

// franzProducer is a kgo client with a transactional id. Write and the
// transaction calls run on the subtask goroutine; acked runs on kgo's.
//
// Delivery is bounded by record contexts, not kgo's RecordDeliveryTimeout:
// kgo measures that from each record's Timestamp, which here is the
// source record's (event) time, so records replayed after a restore would
// time out before they are ever sent. A record's context expires
// deliveryTimeout (at most) after it was written; a record still waiting
// for buffer space or never sent then fails, which fails the flush.
type franzProducer struct {
	cl              *kgo.Client
	id              string
	topic           string
	deliveryTimeout time.Duration
	promise         func(*kgo.Record, error)
	slab            []kgo.Record // records are carved from slabs: one allocation per slabSize
	written         int64
	ctx             context.Context // of the records written now
	pinCtx          context.Context // ctx marked pinned (WriteTo), made from pinBase
	pinBase         context.Context
	renew           time.Time // when to make a new ctx
	cancels         []context.CancelFunc

	// disturbed: a broker connection closed since Begin. A broker that
	// restarted may have lost the open transaction (kfake aborts what was
	// open at a crash) and still answer its commit with success, as a
	// retry of the commit before it; such a commit is checked in the log.
	disturbed atomic.Bool

	mu    sync.Mutex
	err   error           // the first failed write of the transaction
	first map[int32]int64 // first acknowledged offset per partition
}

const slabSize = 512

func (p *franzProducer) acked(r *kgo.Record, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		return
	}
	if off, ok := p.first[r.Partition]; !ok || r.Offset < off {
		p.first[r.Partition] = r.Offset
	}
}

// disturbHook marks its producer's transaction disturbed.
type disturbHook struct{ p *franzProducer }

func (h disturbHook) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) { h.p.disturbed.Store(true) }

// errUnchecked: the commit was answered, but after a lost connection
// (franzProducer.disturbed); the caller reads the outcome (Finish).
var errUnchecked = errors.New("a broker connection was lost during the transaction, so the commit's answer is checked in the log")

func (p *franzProducer) Begin() error {
	p.disturbed.Store(false)
	p.mu.Lock()
	p.err = nil
	clear(p.first)
	p.mu.Unlock()
	p.written = 0
	return p.cl.BeginTransaction()
}

func (p *franzProducer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Write takes key and value as they are: the caller hands over slices it
// will not touch again.
func (p *franzProducer) Write(key, value []byte, timestamp int64) error {
	return p.write(p.recordCtx(), 0, key, value, timestamp)
}

// WriteTo is Write into partition: its record's context is marked for
// pinningPartitioner.
func (p *franzProducer) WriteTo(partition int32, key, value []byte, timestamp int64) error {
	if ctx := p.recordCtx(); ctx != p.pinBase {
		p.pinBase, p.pinCtx = ctx, context.WithValue(ctx, pinnedKey{}, true)
	}
	return p.write(p.pinCtx, partition, key, value, timestamp)
}

func (p *franzProducer) write(ctx context.Context, partition int32, key, value []byte, timestamp int64) error {
	if err := p.failed(); err != nil {
		return err
	}
	if len(p.slab) == 0 {
		p.slab = make([]kgo.Record, slabSize)
	}
	r := &p.slab[0]
	p.slab = p.slab[1:]
	r.Key, r.Value, r.Partition = key, value, partition
	if timestamp != 0 {
		r.Timestamp = time.UnixMilli(timestamp)
	}
	p.written++
	p.cl.Produce(ctx, r, p.promise)
	return nil
}

// pinnedKey marks the context of a record written with WriteTo.
type pinnedKey struct{}

func pinned(r *kgo.Record) bool {
	return r.Context != nil && r.Context.Value(pinnedKey{}) != nil
}

// pinningPartitioner is kgo's default partitioner (uniform bytes, keys by
// murmur2, as before) except for records written with WriteTo, which go
// to the partition they name: a rewrite shares the open transaction, and
// so the producer, with the records that follow it.
type pinningPartitioner struct{ kgo.Partitioner }

func (p pinningPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return pinningTopicPartitioner{p.Partitioner.ForTopic(topic)}
}

type pinningTopicPartitioner struct{ kgo.TopicPartitioner }

var _ kgo.TopicBackupPartitioner = pinningTopicPartitioner{}

// RequiresConsistency: a pinned record is partitioned over every
// partition (not only the writable ones), so that its index is its
// partition, as for kgo's ManualPartitioner.
func (p pinningTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return pinned(r) || p.TopicPartitioner.RequiresConsistency(r)
}

func (p pinningTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if pinned(r) {
		return int(r.Partition)
	}
	return p.TopicPartitioner.Partition(r, n)
}

func (p pinningTopicPartitioner) PartitionByBackup(r *kgo.Record, n int, backup kgo.TopicBackupIter) int {
	if pinned(r) {
		return int(r.Partition)
	}
	if b, ok := p.TopicPartitioner.(kgo.TopicBackupPartitioner); ok {
		return b.PartitionByBackup(r, n, backup)
	}
	return p.TopicPartitioner.Partition(r, n)
}

// recordCtx returns the context for records written now: a new one every
// tenth of deliveryTimeout, so each expires between 0.9 and 1 times
// deliveryTimeout after its records were written.
func (p *franzProducer) recordCtx() context.Context {
	if now := time.Now(); p.ctx == nil || now.After(p.renew) {
		ctx, cancel := context.WithTimeout(context.Background(), p.deliveryTimeout)
		p.ctx, p.renew = ctx, now.Add(p.deliveryTimeout/10)
		p.cancels = append(p.cancels, cancel)
	}
	return p.ctx
}

// release cancels the record contexts once no record needs them.
func (p *franzProducer) release() {
	for _, c := range p.cancels {
		c()
	}
	p.cancels, p.ctx, p.pinBase, p.pinCtx = p.cancels[:0], nil, nil, nil
}

func (p *franzProducer) Flush(ctx context.Context) (committable, error) {
	err := p.cl.Flush(ctx)
	p.release()
	if err != nil {
		return committable{}, err
	}
	if err := p.failed(); err != nil {
		return committable{}, err
	}
	pid, epoch, err := p.cl.ProducerID(ctx)
	if err != nil {
		return committable{}, fmt.Errorf("producer id: %w", err)
	}
	c := committable{ID: p.id, ProducerID: pid, Epoch: epoch, Records: p.written, Topic: p.topic}
	p.mu.Lock()
	for part, off := range p.first {
		c.First = append(c.First, partitionOffset{Partition: part, Offset: off})
	}
	p.mu.Unlock()
	slices.SortFunc(c.First, func(a, b partitionOffset) int { return cmp.Compare(a.Partition, b.Partition) })
	return c, nil
}

func (p *franzProducer) Commit(ctx context.Context) error {
	if err := p.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return err
	}
	if p.disturbed.Load() {
		return errUnchecked
	}
	return nil
}

func (p *franzProducer) Abort(ctx context.Context) error {
	defer p.release()
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return err
	}
	return p.cl.EndTransaction(ctx, kgo.TryAbort)
}

func (p *franzProducer) Reusable(c committable) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pid, epoch, err := p.cl.ProducerID(ctx)
	return err == nil && (pid != c.ProducerID || epoch != c.Epoch)
}

func (p *franzProducer) Close() {
	p.cl.Close()
	p.release()
}
