package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

const (
	// DefaultDeliveryTimeout bounds how long a checkpoint waits for the
	// sink's records to be acknowledged (Kafka's delivery.timeout.ms).
	DefaultDeliveryTimeout = 2 * time.Minute
	// maxInFlight bounds the records written but not yet acknowledged;
	// Process waits beyond it (backpressure).
	maxInFlight = 64 << 10
	// writeBatchSize, writeLinger: a partition's batch is sent when full or
	// this long after its first record, so a flush waits at most this.
	writeBatchSize = 10_000
	writeLinger    = 2 * time.Millisecond
	// nullKeyRun: records without key go to one partition for this many
	// records, then the next (like Kafka's sticky partitioner).
	nullKeyRun = 1000
	// closeGrace bounds how long Close waits for unacknowledged records
	// (only a job without checkpoints relies on it: checkpoints flush).
	closeGrace = 2 * time.Second
)

// SinkOptions are the YAML options of the kafka sink.
type SinkOptions struct {
	Brokers         []api.Node    `yaml:"brokers,required"` // host:port strings
	Topic           string        `yaml:"topic,required"`
	Key             string        `yaml:"key"` // expression; default: the record's key
	DeliveryTimeout *api.Duration `yaml:"deliveryTimeout"`
	// deliveryGuarantee and the transaction options: see txnoptions.go.
	DeliveryGuarantee       string        `yaml:"deliveryGuarantee"` // at-least-once, exactly-once, none
	TransactionalIDPrefix   string        `yaml:"transactionalIdPrefix"`
	TransactionTimeout      *api.Duration `yaml:"transactionTimeout"`
	TransactionMaxTimeout   *api.Duration `yaml:"transactionMaxTimeout"`
	TransactionalIDPoolSize int           `yaml:"transactionalIdPoolSize"`
}

type sinkConfig struct {
	brokers         []string
	topic           string
	key             *expr.Program // nil: the record's key
	deliveryTimeout time.Duration
	guarantee       deliveryGuarantee
}

func configureSink(c *runtime.ConfigContext) *runtime.Plan {
	var o SinkOptions
	c.Decode(&o)
	cfg := sinkConfig{brokers: checkBrokers(c, o.Brokers), topic: o.Topic, deliveryTimeout: DefaultDeliveryTimeout}
	if c.Has("topic") && o.Topic == "" {
		c.Errorf("topic", "empty topic name")
	}
	if o.Key != "" {
		p, err := expr.CompileWith(c.Schema, o.Key, expr.Any)
		if err != nil {
			c.Errorf("key", "operator %q: cannot compile expression %q: %v", c.Op.UID, o.Key, err)
			return nil
		}
		cfg.key = p
	}
	if o.DeliveryTimeout != nil {
		if cfg.deliveryTimeout = o.DeliveryTimeout.D(); cfg.deliveryTimeout <= 0 {
			c.Errorf("deliveryTimeout", "must be positive")
		}
	}
	var txn txnSettings
	cfg.guarantee, txn = configureDelivery(c, &o)
	if cfg.guarantee == exactlyOnce {
		return txnPlan(cfg, txn)
	}
	return &runtime.Plan{NewOperator: func() runtime.Operator {
		return &sink{cfg: cfg, key: newKeyer(cfg.key)}
	}}
}

// sink is one subtask of the kafka sink: at-least-once. Records are written
// asynchronously in batches by kafka-go's Writer; SnapshotState waits until
// every record written so far is acknowledged by the broker (acks=all), so a
// completed checkpoint never covers a record that is not in the topic. A
// failed write fails the checkpoint and the job, which then replays from
// the last checkpoint: records after it may be written twice. There is no
// exactly-once mode: kafka-go has no transactional producer.
type sink struct {
	cfg    sinkConfig
	key    keyer
	ctx    *runtime.Context
	faults bool
	tr     *kafka.Transport
	abort  context.CancelFunc
	w      *kafka.Writer
	acks   *inflight
	msgs   []kafka.Message
	arena  runtime.Arena
	seq    int64
}

func (s *sink) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	s.faults = ctx.FaultsArmed()
	s.acks = newInflight()
	s.tr = &kafka.Transport{ClientID: clientID, DialTimeout: requestTimeout}
	if err := s.checkTopic(); err != nil {
		return fmt.Errorf("kafka sink: %w", err)
	}
	aborted, abort := context.WithCancel(context.Background())
	s.abort = abort
	s.w = &kafka.Writer{
		Addr:      kafka.TCP(s.cfg.brokers...),
		Topic:     s.cfg.topic,
		Transport: abortable{tr: s.tr, ctx: aborted},
		Balancer:  &balancer{nullKeys: kafka.RoundRobin{ChunkSize: nullKeyRun}},
		// acks=all: an acknowledged record survives the broker.
		RequiredAcks:    kafka.RequireAll,
		Async:           true,
		Completion:      s.acks.done,
		BatchSize:       writeBatchSize,
		BatchTimeout:    writeLinger,
		MaxAttempts:     10,
		WriteBackoffMin: 100 * time.Millisecond,
		WriteBackoffMax: 500 * time.Millisecond,
		ReadTimeout:     requestTimeout,
		WriteTimeout:    requestTimeout,
	}
	return nil
}

// checkTopic fails fast on a missing topic, which the Writer would retry.
func (s *sink) checkTopic() error {
	c := &cluster{brokers: s.cfg.brokers, tr: s.tr,
		cl: &kafka.Client{Addr: kafka.TCP(s.cfg.brokers...), Transport: s.tr, Timeout: requestTimeout}}
	_, err := c.partitions(context.Background(), []string{s.cfg.topic})
	return err
}

func (s *sink) Process(b *runtime.Batch, _ runtime.Output) error {
	if err := s.acks.wait(maxInFlight, s.cfg.deliveryTimeout); err != nil {
		return s.writeError(err)
	}
	msgs := s.msgs[:0]
	for i := range b.Records {
		r := &b.Records[i]
		s.seq++
		m := kafka.Message{Value: s.arena.Copy(r.Value)}
		key, err := s.key.of(r)
		if err != nil {
			return fmt.Errorf("kafka sink %q subtask %d, record %d: key: %w", s.ctx.UID(), s.ctx.Subtask(), s.seq, err)
		}
		if key != nil {
			m.Key = s.arena.Copy(key)
		}
		if r.Timestamp != 0 {
			m.Time = time.UnixMilli(r.Timestamp)
		}
		msgs = append(msgs, m)
	}
	s.msgs = msgs
	if len(msgs) == 0 {
		return nil
	}
	s.acks.add(len(msgs))
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := s.w.WriteMessages(ctx, msgs...); err != nil {
		// Nothing was queued (async mode only fails before queueing).
		s.acks.done(msgs, nil)
		return s.writeError(err)
	}
	clear(s.msgs) // the Writer copied the messages; drop our references
	return nil
}

// keyer computes a record's Kafka key: the key expression's value as
// bytes, or the record's key. One per subtask (the program is a clone).
type keyer struct {
	prog    *expr.Program // nil: the record's key
	scratch []byte
}

func newKeyer(p *expr.Program) keyer {
	if p == nil {
		return keyer{}
	}
	return keyer{prog: p.Clone()}
}

// of returns r's key; the slice is valid until the next call.
func (k *keyer) of(r *runtime.Record) ([]byte, error) {
	if k.prog == nil {
		return r.Key, nil
	}
	v, err := k.prog.Eval(r)
	if err != nil {
		return nil, err
	}
	k.scratch, err = expr.AppendValue(k.scratch[:0], v)
	return k.scratch, err
}

func (s *sink) writeError(err error) error {
	return fmt.Errorf("kafka sink: write to topic %q: %w", s.cfg.topic, err)
}

// SnapshotState flushes: it returns once every record written so far is
// acknowledged, or the first write error (which fails the checkpoint), or
// an error after deliveryTimeout.
func (s *sink) SnapshotState(id int64) error {
	if s.cfg.guarantee == noGuarantee {
		return nil // deliveryGuarantee none: a checkpoint does not wait for the writes
	}
	if s.faults {
		if err := s.ctx.Fault("kafka.sink.flush", s.ctx.UID(), s.ctx.Subtask(), id); err != nil {
			return err
		}
	}
	if err := s.acks.wait(0, s.cfg.deliveryTimeout); err != nil {
		s.acks.fail(err)
		return fmt.Errorf("kafka sink: flush for checkpoint %d: %w", id, s.writeError(err))
	}
	return nil
}

// Close waits briefly for unacknowledged records (unless writes failed
// already), then aborts what kafka-go still retries and releases the
// connections. Records it drops are after the last checkpoint: a restore
// writes them again.
func (s *sink) Close() error {
	if s.w != nil {
		if err := s.acks.wait(0, min(closeGrace, s.cfg.deliveryTimeout)); err != nil {
			s.ctx.Log().Warn().Err(err).Str("topic", s.cfg.topic).Msg("kafka sink closed with records not acknowledged")
		}
		s.abort()
		s.w.Close()
	}
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
	return nil
}

// abortable is the Writer's transport: cancelling ctx aborts every produce
// request in flight or to come, so that kafka-go's retries (which Writer.Close
// waits for) end at once. Metadata requests, answered from the transport's
// cache on every record, pass through unchanged.
type abortable struct {
	tr  *kafka.Transport
	ctx context.Context
}

func (a abortable) RoundTrip(ctx context.Context, addr net.Addr, req kafka.Request) (kafka.Response, error) {
	if _, ok := req.(*metadata.Request); ok {
		return a.tr.RoundTrip(ctx, addr, req)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(a.ctx, cancel)()
	return a.tr.RoundTrip(ctx, addr, req)
}

// balancer sends keyed records to murmur2(key) mod partitions, as Java's
// default partitioner and Flink's KafkaSink do, and records without a key
// round-robin in runs of nullKeyRun.
type balancer struct {
	keyed    kafka.Murmur2Balancer
	nullKeys kafka.RoundRobin
}

func (b *balancer) Balance(m kafka.Message, partitions ...int) int {
	if m.Key == nil {
		return b.nullKeys.Balance(m, partitions...)
	}
	return b.keyed.Balance(m, partitions...)
}
