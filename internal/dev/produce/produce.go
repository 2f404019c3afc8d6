// Package produce is the sequential producer of the savepoint demo, behind
// `flinkgo dev produce`: it writes {"idx": N} for N = Start, Start+1, … to a
// Kafka topic, optionally at a fixed rate and for a fixed count.
//
// Records are written in order with segmentio/kafka-go's Writer, acks=all,
// one chunk at a time: a chunk is acknowledged before the next is sent, so
// within a partition idx values are strictly increasing and the sent count is
// exact. With round robin over P partitions, idx N lands in partition
// (N-Start) mod P.
package produce

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

const (
	// DefaultStart is the first idx when Config.Start is zero.
	DefaultStart = 1

	// maxChunk bounds the records handed to one WriteMessages call. Ten
	// thousand records of ~14 bytes stay well below the broker's default
	// 1 MB batch limit.
	maxChunk = 10_000

	// chunkPeriod is the time worth of records one chunk holds when the
	// rate is limited: bursts last at most this long.
	chunkPeriod = 10 * time.Millisecond

	// progressEvery is how often Config.Progress is called.
	progressEvery = time.Second

	// writeTimeout bounds one chunk's write, retries included.
	writeTimeout = 30 * time.Second

	// metadataTimeout bounds the topic lookup at start.
	metadataTimeout = 10 * time.Second
)

// Config configures Run.
type Config struct {
	// Brokers are bootstrap host:port addresses.
	Brokers []string

	// Topic must exist; Run does not create it.
	Topic string

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
	case c.Start < 0:
		return fmt.Errorf("start %d: must not be negative", c.Start)
	case c.Count < 0:
		return fmt.Errorf("count %d: must not be negative (0 means unbounded)", c.Count)
	case c.Rate < 0:
		return fmt.Errorf("rate %v: must not be negative (0 means unlimited)", c.Rate)
	}
	return nil
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
	p := newProducer(cfg, tr)
	defer p.w.Close()
	return p.run(ctx)
}

// checkTopic fails fast on a missing topic or partition, which kafka-go's
// Writer would otherwise retry for a long while.
func checkTopic(ctx context.Context, cfg Config, tr *kafka.Transport) error {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Transport: tr}
	resp, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{cfg.Topic}})
	if err != nil {
		return fmt.Errorf("read metadata from %v: %w", cfg.Brokers, err)
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("metadata from %v: no answer for the topic", cfg.Brokers)
	}
	t := resp.Topics[0]
	if t.Error != nil {
		return fmt.Errorf("topic: %w", t.Error)
	}
	if cfg.Partition != nil && *cfg.Partition >= len(t.Partitions) {
		return fmt.Errorf("partition %d: topic has %d partitions", *cfg.Partition, len(t.Partitions))
	}
	return nil
}

type producer struct {
	cfg   Config
	w     *kafka.Writer
	pace  *pacer // nil: unlimited
	chunk int64  // records per WriteMessages call

	msgs []kafka.Message
	buf  []byte
	offs []int

	sent         int64
	nextProgress time.Time
}

func newProducer(cfg Config, tr *kafka.Transport) *producer {
	p := &producer{cfg: cfg, chunk: chunkSize(cfg.Rate)}
	p.w = &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        cfg.Topic,
		Balancer:     balancer(cfg.Partition),
		RequiredAcks: kafka.RequireAll,
		BatchSize:    int(p.chunk),
		// A chunk smaller than BatchSize per partition is flushed when
		// this expires: kafka-go's default of 1s would stall every chunk.
		BatchTimeout: time.Millisecond,
		WriteTimeout: writeTimeout,
		Transport:    tr,
	}
	if cfg.Rate > 0 {
		p.pace = newPacer(cfg.Rate, time.Now())
	}
	p.msgs = make([]kafka.Message, p.chunk)
	p.nextProgress = time.Now().Add(progressEvery)
	return p
}

// chunkSize is the records per write: chunkPeriod worth at a limited rate
// (at least one), maxChunk when unlimited.
func chunkSize(rate float64) int64 {
	if rate <= 0 {
		return maxChunk
	}
	n := int64(rate * chunkPeriod.Seconds())
	return min(max(n, 1), maxChunk)
}

func balancer(partition *int) kafka.Balancer {
	if partition == nil {
		return &kafka.RoundRobin{}
	}
	p := *partition
	return kafka.BalancerFunc(func(kafka.Message, ...int) int { return p })
}

func (p *producer) run(ctx context.Context) (int64, error) {
	defer p.progress()
	for p.cfg.Count == 0 || p.sent < p.cfg.Count {
		n := p.chunk
		if p.cfg.Count > 0 {
			n = min(n, p.cfg.Count-p.sent)
		}
		if p.pace != nil && p.pace.wait(ctx, n) != nil {
			return p.sent, nil
		}
		if ctx.Err() != nil {
			return p.sent, nil
		}
		if err := p.write(ctx, n); err != nil {
			return p.sent, err
		}
		if time.Now().After(p.nextProgress) {
			p.progress()
		}
	}
	return p.sent, nil
}

// write sends the next n records and waits for their acknowledgement. It is
// not interrupted by ctx: kafka-go may still write a batch after a cancelled
// WriteMessages returns, which would make the sent count a guess.
func (p *producer) write(ctx context.Context, n int64) error {
	first := p.cfg.Start + p.sent
	msgs := p.encode(first, n)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	err := p.w.WriteMessages(wctx, msgs...)
	if err == nil {
		p.sent += n
		return nil
	}
	var werrs kafka.WriteErrors
	if errors.As(err, &werrs) {
		p.sent += int64(len(werrs) - werrs.Count())
		err = firstError(werrs)
	}
	return fmt.Errorf("produce to %s: write idx %d..%d: %w", p.cfg.Topic, first, first+n-1, err)
}

// encode fills the reused message slice with {"idx": first} … and returns
// its first n entries. Values share one buffer, rebuilt per chunk; the
// Writer is done with them once WriteMessages returns.
func (p *producer) encode(first, n int64) []kafka.Message {
	p.buf, p.offs = p.buf[:0], p.offs[:0]
	for i := range n {
		p.offs = append(p.offs, len(p.buf))
		p.buf = AppendRecord(p.buf, first+i)
	}
	p.offs = append(p.offs, len(p.buf))
	msgs := p.msgs[:n]
	for i := range msgs {
		lo, hi := p.offs[i], p.offs[i+1]
		msgs[i] = kafka.Message{Value: p.buf[lo:hi:hi]}
	}
	return msgs
}

func (p *producer) progress() {
	p.nextProgress = time.Now().Add(progressEvery)
	if p.cfg.Progress != nil {
		p.cfg.Progress(p.sent, p.cfg.Start+p.sent-1)
	}
}

// AppendRecord appends the demo record for idx, {"idx": idx}, to dst.
func AppendRecord(dst []byte, idx int64) []byte {
	dst = append(dst, `{"idx": `...)
	dst = strconv.AppendInt(dst, idx, 10)
	return append(dst, '}')
}

func firstError(werrs kafka.WriteErrors) error {
	for _, err := range werrs {
		if err != nil {
			return err
		}
	}
	return errors.New("write failed")
}
