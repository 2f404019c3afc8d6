package natsserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flinkgo/flinkgo/internal/dev/payload"
	"github.com/flinkgo/flinkgo/internal/dev/sequence"
)

const (
	// maxChunk bounds the messages published before waiting for their
	// publish acks.
	maxChunk = 1000
	// ackTimeout bounds the wait for one chunk's publish acks.
	ackTimeout = 30 * time.Second
)

// ProduceConfig configures Produce.
type ProduceConfig struct {
	// URL is the server's client URL (nats://host:port).
	URL string
	// Subject must be captured by a stream; Produce does not create one.
	Subject string
	// Start is the first idx, 1 when zero.
	Start int64
	// Count is how many messages to publish; 0 means until ctx is done.
	Count int64
	// Rate is messages per second; 0 means as fast as possible.
	Rate float64
	// Records makes message idx; nil: {"idx": N}. It must not have a key
	// (NATS messages have none); an event's ts is only in its JSON (the
	// stream stamps messages with the server's time). An expression that
	// fails at some idx stops Produce after the messages before it were
	// acknowledged.
	Records *payload.Maker
	// Progress, if set, is called on Produce's goroutine about once a
	// second and once at the end, with the messages acknowledged so far
	// and the last idx acknowledged (Start-1 before the first).
	Progress func(sent, last int64)
}

// Validate reports the first invalid field.
func (c ProduceConfig) Validate() error {
	switch {
	case c.URL == "":
		return errors.New("no server URL")
	case c.Subject == "":
		return errors.New("no subject")
	case c.Records != nil && c.Records.HasKey():
		return errors.New("a key expression is for Kafka: NATS messages have no key")
	}
	return sequence.Options{Start: c.Start, Count: c.Count, Rate: c.Rate}.Validate()
}

// Produce publishes record N for N = Start, Start+1, … ({"idx": N} unless
// Records says otherwise) to Subject and
// returns how many the stream acknowledged. Messages go out in chunks; a
// chunk's publish acks are awaited before the next chunk, so the messages
// are stored in idx order and sent is exact. When ctx is done Produce
// finishes the chunk in flight and returns with a nil error; a new Produce
// with Start = Start+sent continues the sequence without gap or duplicate.
// An error (no stream for the subject, server unreachable, a refused
// publish) stops it; sent then counts the messages acknowledged before.
func Produce(ctx context.Context, cfg ProduceConfig) (sent int64, err error) {
	if err := cfg.Validate(); err != nil {
		return 0, fmt.Errorf("produce: %w", err)
	}
	if cfg.Start == 0 {
		cfg.Start = 1
	}
	nc, err := nats.Connect(cfg.URL, nats.Name("flinkgo dev produce"))
	if err != nil {
		return 0, fmt.Errorf("produce: connect to %s: %w", cfg.URL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(maxChunk))
	if err != nil {
		return 0, fmt.Errorf("produce: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if _, err := js.StreamNameBySubject(lctx, cfg.Subject); err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		return 0, fmt.Errorf("produce: no stream captures subject %q: %w", cfg.Subject, err)
	}
	if cfg.Records == nil {
		cfg.Records, _ = payload.New(payload.Options{})
	}
	p := &producer{cfg: cfg, js: js}
	o := sequence.Options{Start: cfg.Start, Count: cfg.Count, Rate: cfg.Rate, Chunk: maxChunk, Progress: cfg.Progress}
	return sequence.Run(ctx, o, p.publish)
}

// producer publishes chunks of the sequence and waits for their acks.
type producer struct {
	cfg ProduceConfig
	js  jetstream.JetStream
}

// publish sends messages first..first+n-1 and waits for their publish
// acks. It is not interrupted by ctx, so that the count stays exact. A
// message that cannot be made (an expression failing at its idx) ends the
// chunk before it: the messages before it are published and acknowledged,
// then its error is returned.
func (p *producer) publish(first, n int64) (int64, error) {
	vals, encErr := p.encode(first, n)
	acked, err := p.send(first, vals)
	if err != nil {
		return acked, err
	}
	return acked, encErr
}

// encode makes the values of messages first..first+n-1, or of those
// before the first that could not be made, with its error.
// The buffer is new per chunk: the client keeps a message until its ack
// (to retry it).
func (p *producer) encode(first, n int64) ([][]byte, error) {
	var buf []byte
	ends := make([]int, 0, n)
	var err error
	for i := range n {
		if buf, _, _, err = p.cfg.Records.Append(buf, first+i); err != nil {
			break
		}
		ends = append(ends, len(buf))
	}
	vals, start := make([][]byte, len(ends)), 0
	for i, end := range ends {
		vals[i], start = buf[start:end:end], end
	}
	return vals, err
}

// send publishes vals as messages first… and waits for their acks.
func (p *producer) send(first int64, vals [][]byte) (int64, error) {
	n := int64(len(vals))
	if n == 0 {
		return 0, nil
	}
	futures := make([]jetstream.PubAckFuture, 0, n)
	for _, v := range vals {
		f, err := p.js.PublishAsync(p.cfg.Subject, v)
		if err != nil {
			return p.fail(futures, first, n, err)
		}
		futures = append(futures, f)
	}
	select {
	case <-p.js.PublishAsyncComplete():
	case <-time.After(ackTimeout):
		return p.fail(futures, first, n, fmt.Errorf("no publish ack after %s", ackTimeout))
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return p.fail(futures, first, n, err)
		}
	}
	return n, nil
}

// fail counts the leading acknowledged messages of a failed chunk.
func (p *producer) fail(futures []jetstream.PubAckFuture, first, n int64, err error) (int64, error) {
	var acked int64
	for _, f := range futures {
		if !isAcked(f) {
			break
		}
		acked++
	}
	return acked, fmt.Errorf("produce to %s: publish idx %d..%d: %w", p.cfg.Subject, first, first+n-1, err)
}

func isAcked(f jetstream.PubAckFuture) bool {
	select {
	case <-f.Ok():
		return true
	default:
		return false
	}
}

// AppendRecord appends the demo record for idx, {"idx": idx}, to dst.
func AppendRecord(dst []byte, idx int64) []byte { return sequence.AppendRecord(dst, idx) }
