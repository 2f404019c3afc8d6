package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	admin, err := kgo.NewClient(cfg.base()...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for brokers %v: %w", cfg.brokers, err)
	}
	return &franzClient{cfg: cfg, admin: admin}, nil
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

// Fence sends InitProducerID for each id.
func (c *franzClient) Fence(ctx context.Context, ids []string) error {
	for _, id := range ids {
		err := retry(ctx, func() error {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID = kmsg.StringPtr(id)
			req.TransactionTimeoutMillis = int32(c.cfg.transactionTimeout / time.Millisecond)
			req.ProducerID, req.ProducerEpoch = -1, -1
			resp, err := req.RequestWith(ctx, c.admin)
			if err != nil {
				return err
			}
			return kerr.ErrorForCode(resp.ErrorCode)
		})
		if errors.Is(err, kerr.InvalidTransactionTimeout) {
			return fmt.Errorf("%s: the brokers refuse transactionTimeout %s (above their transaction.max.timeout.ms): lower transactionTimeout, or raise transaction.max.timeout.ms on the brokers and transactionMaxTimeout: %w", id, c.cfg.transactionTimeout, err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
	}
	return nil
}

// Finish sends EndTxn(commit) with the committable's producer id and
// epoch, which commits exactly that transaction if it is still open, and
// is answered with success if it was the last transaction of its id and
// committed. Any other refusal (a newer epoch, another outcome, an id the
// broker forgot) is settled by reading the outcome from the log.
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
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch),
		errors.Is(err, kerr.InvalidTxnState), errors.Is(err, kerr.InvalidProducerIDMapping),
		errors.Is(err, kerr.TransactionalIDNotFound):
		return c.outcomeFromLog(ctx, cm)
	}
	return false, err
}

// NewProducer returns a transactional producer for id.
func (c *franzClient) NewProducer(id string) (txnProducer, error) {
	p := &franzProducer{id: id, topic: c.cfg.topic, first: map[int32]int64{}, deliveryTimeout: c.cfg.deliveryTimeout}
	p.promise = p.acked
	cl, err := kgo.NewClient(append(c.cfg.base(),
		kgo.TransactionalID(id), kgo.TransactionTimeout(c.cfg.transactionTimeout),
		kgo.DefaultProduceTopic(c.cfg.topic), kgo.MaxBufferedRecords(maxInFlight))...)
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
	renew           time.Time       // when to make a new ctx
	cancels         []context.CancelFunc

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

func (p *franzProducer) Begin() error {
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
	if err := p.failed(); err != nil {
		return err
	}
	if len(p.slab) == 0 {
		p.slab = make([]kgo.Record, slabSize)
	}
	r := &p.slab[0]
	p.slab = p.slab[1:]
	r.Key, r.Value = key, value
	if timestamp != 0 {
		r.Timestamp = time.UnixMilli(timestamp)
	}
	p.written++
	p.cl.Produce(p.recordCtx(), r, p.promise)
	return nil
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
	p.cancels, p.ctx = p.cancels[:0], nil
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
	return p.cl.EndTransaction(ctx, kgo.TryCommit)
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
