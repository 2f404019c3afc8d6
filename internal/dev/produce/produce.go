// Package produce is the sequential producer of the savepoint demo, behind
// `flinkgo dev produce`: it writes record N for N = Start, Start+1, … to a
// Kafka topic, optionally at a fixed rate and for a fixed count. Record N
// is {"idx": N}, or what Config.Records makes of N (an expression, or
// datagen's events with their ts as the Kafka timestamp; see package
// payload).
//
// Records are written in order with segmentio/kafka-go's Writer, acks=all,
// one chunk at a time: a chunk is acknowledged before the next is sent, so
// within a partition idx values are strictly increasing and the sent count is
// exact. With round robin over P partitions, idx N lands in partition
// (N-Start) mod P; records with a key (Records with a key expression) are
// partitioned by key instead, with the Java client's murmur2 hash, so a
// key's records share a partition and stay in idx order there.
package produce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/flinkgo/flinkgo/internal/dev/payload"
	"github.com/flinkgo/flinkgo/internal/dev/sequence"
)

const (
	// DefaultStart is the first idx when Config.Start is zero.
	DefaultStart = sequence.DefaultStart
	// writeTimeout bounds one chunk's write, retries included.
	writeTimeout = 30 * time.Second
	// metadataTimeout bounds the topic lookup at start.
	metadataTimeout = 10 * time.Second
)

// Config configures Run.
type Config struct {
	// Brokers are bootstrap host:port addresses.
	Brokers []string

	// Topic is the topic written. A missing one is an error unless
	// CreateTopic.
	Topic string

	// CreateTopic asks the broker to create a missing Topic, as Kafka's
	// producers do by default (allow.auto.create.topics): a broker that
	// allows it (auto.create.topics.enable; flinkgo dev kafka does unless
	// --auto-create-topics=false) creates it with its default partition
	// count, one that does not answers "unknown topic" as before.
	CreateTopic bool

	// Partition, if set, sends every record to that partition. Nil
	// spreads records round robin over all partitions.
	Partition *int

	// Start is the first idx, DefaultStart when zero.
	Start int64

	// Count is how many records to send; 0 means until ctx is done.
	Count int64

	// Rate is records per second; 0 means as fast as possible. Records go
	// out in chunks of at most 10ms worth, never in bursts of a second.
	Rate float64

	// Records makes record idx; nil: {"idx": N}. An expression that fails
	// at some idx stops Run after the records before it were sent.
	Records *payload.Maker

	// Progress, if set, is called on Run's goroutine about once a second
	// and once at the end, with the records acknowledged so far and the
	// last idx acknowledged (Start-1 before the first).
	Progress func(sent int64, last int64)
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case len(c.Brokers) == 0:
		return errors.New("no brokers")
	case c.Topic == "":
		return errors.New("no topic")
	case c.Partition != nil && *c.Partition < 0:
		return fmt.Errorf("partition %d: must not be negative", *c.Partition)
	}
	return sequence.Options{Start: c.Start, Count: c.Count, Rate: c.Rate}.Validate()
}

// Run sends records until Count are acknowledged or ctx is done, and returns
// how many were acknowledged. When ctx is done it finishes the chunk in
// flight (so that sent is exactly what reached the topic), then returns with
// a nil error. The records sent are idx Start … Start+sent-1; a new Run with
// Start = Start+sent continues the sequence without gap or duplicate.
//
// An error (unknown topic, partition out of range, broker unreachable, a
// write that failed after kafka-go's retries) stops Run; sent then counts the
// records acknowledged before it, and the chunk that failed may be partly
// written.
func Run(ctx context.Context, cfg Config) (sent int64, err error) {
	if err := cfg.Validate(); err != nil {
		return 0, fmt.Errorf("produce: %w", err)
	}
	if cfg.Start == 0 {
		cfg.Start = DefaultStart
	}
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	if err := checkTopic(ctx, cfg, tr); err != nil {
		if ctx.Err() != nil {
			return 0, nil // stopped before the first record
		}
		return 0, fmt.Errorf("produce to %s: %w", cfg.Topic, err)
	}
	if cfg.Records == nil {
		cfg.Records, _ = payload.New(payload.Options{})
	}
	p := newProducer(cfg, tr)
	defer p.w.Close()
	return p.run(ctx)
}

// checkTopic fails fast on a missing topic or partition, which kafka-go's
// Writer would otherwise retry for a long while.
func checkTopic(ctx context.Context, cfg Config, tr *kafka.Transport) error {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	m, err := tr.RoundTrip(ctx, kafka.TCP(cfg.Brokers...), &metadata.Request{TopicNames: []string{cfg.Topic}, AllowAutoTopicCreation: cfg.CreateTopic})
	if err != nil {
		return fmt.Errorf("read metadata from %v: %w", cfg.Brokers, err)
	}
	resp, ok := m.(*metadata.Response)
	if !ok || len(resp.Topics) != 1 {
		return fmt.Errorf("metadata from %v: no answer for the topic", cfg.Brokers)
	}
	t := resp.Topics[0]
	if t.ErrorCode != 0 {
		return fmt.Errorf("topic: %w", kafka.Error(t.ErrorCode))
	}
	if cfg.Partition != nil && *cfg.Partition >= len(t.Partitions) {
		return fmt.Errorf("partition %d: topic has %d partitions", *cfg.Partition, len(t.Partitions))
	}
	return nil
}

// producer writes chunks of the sequence with a kafka-go Writer.
type producer struct {
	cfg   Config
	w     *kafka.Writer
	msgs  []kafka.Message
	buf   []byte
	spans []span
}

// span locates one encoded record in producer.buf.
type span struct {
	start, keyEnd, end int
	ts                 int64
}

func newProducer(cfg Config, tr *kafka.Transport) *producer {
	chunk := sequence.ChunkSize(cfg.Rate)
	p := &producer{cfg: cfg, msgs: make([]kafka.Message, chunk)}
	p.w = &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        cfg.Topic,
		Balancer:     balancer(cfg.Partition, cfg.Records.HasKey()),
		RequiredAcks: kafka.RequireAll,
		BatchSize:    int(chunk),
		// A chunk smaller than BatchSize per partition is flushed when
		// this expires: kafka-go's default of 1s would stall every chunk.
		BatchTimeout: time.Millisecond,
		WriteTimeout: writeTimeout,
		Transport:    tr,
	}
	return p
}

func (p *producer) run(ctx context.Context) (int64, error) {
	o := sequence.Options{Start: p.cfg.Start, Count: p.cfg.Count, Rate: p.cfg.Rate, Progress: p.cfg.Progress}
	return sequence.Run(ctx, o, func(first, n int64) (int64, error) { return p.write(ctx, first, n) })
}

func balancer(partition *int, keyed bool) kafka.Balancer {
	switch {
	case partition == nil && keyed:
		return &kafka.Murmur2Balancer{}
	case partition == nil:
		return &kafka.RoundRobin{}
	}
	p := *partition
	return kafka.BalancerFunc(func(kafka.Message, ...int) int { return p })
}

// write sends records first..first+n-1 and waits for their acknowledgement.
// It is not interrupted by ctx: kafka-go may still write a batch after a
// cancelled WriteMessages returns, which would make the sent count a guess.
//
// A record that cannot be made (an expression failing at its idx) ends the
// chunk before it: the records before it are written, then its error is
// returned.
func (p *producer) write(ctx context.Context, first, n int64) (int64, error) {
	msgs, encErr := p.encode(first, n)
	if len(msgs) == 0 {
		return 0, encErr
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	err := p.w.WriteMessages(wctx, msgs...)
	if err == nil {
		return int64(len(msgs)), encErr
	}
	var acked int64
	var werrs kafka.WriteErrors
	if errors.As(err, &werrs) {
		acked = int64(len(werrs) - werrs.Count())
		err = firstError(werrs)
	}
	return acked, fmt.Errorf("produce to %s: write idx %d..%d: %w", p.cfg.Topic, first, first+n-1, err)
}

// encode fills the reused message slice with records first … and returns
// its first n entries, or those before the first record that could not be
// made, with its error. Keys and values share one buffer, rebuilt per
// chunk; the Writer is done with them once WriteMessages returns.
func (p *producer) encode(first, n int64) ([]kafka.Message, error) {
	p.buf, p.spans = p.buf[:0], p.spans[:0]
	var err error
	for i := range n {
		sp := span{start: len(p.buf)}
		var keyLen int
		if p.buf, keyLen, sp.ts, err = p.cfg.Records.Append(p.buf, first+i); err != nil {
			break
		}
		sp.keyEnd, sp.end = sp.start+keyLen, len(p.buf)
		p.spans = append(p.spans, sp)
	}
	msgs := p.msgs[:len(p.spans)]
	keyed, timed := p.cfg.Records.HasKey(), p.cfg.Records.HasTime()
	for i, sp := range p.spans {
		msgs[i] = kafka.Message{Value: p.buf[sp.keyEnd:sp.end:sp.end]}
		if keyed {
			msgs[i].Key = p.buf[sp.start:sp.keyEnd:sp.keyEnd]
		}
		if timed {
			msgs[i].Time = time.UnixMilli(sp.ts)
		}
	}
	return msgs, err
}

// AppendRecord appends the demo record for idx, {"idx": idx}, to dst.
func AppendRecord(dst []byte, idx int64) []byte { return sequence.AppendRecord(dst, idx) }

func firstError(werrs kafka.WriteErrors) error {
	for _, err := range werrs {
		if err != nil {
			return err
		}
	}
	return errors.New("write failed")
}
