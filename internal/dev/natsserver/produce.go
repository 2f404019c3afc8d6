package natsserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// maxChunk bounds the messages published before waiting for their
	// publish acks.
	maxChunk = 1000
	// chunkPeriod is the time worth of messages one chunk holds when the
	// rate is limited: bursts last at most this long.
	chunkPeriod = 10 * time.Millisecond
	// progressEvery is how often ProduceConfig.Progress is called.
	progressEvery = time.Second
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
	case c.Start < 0:
		return fmt.Errorf("start %d: must not be negative", c.Start)
	case c.Count < 0:
		return fmt.Errorf("count %d: must not be negative (0 means unbounded)", c.Count)
	case c.Rate < 0:
		return fmt.Errorf("rate %v: must not be negative (0 means unlimited)", c.Rate)
	}
	return nil
}

// Produce publishes {"idx": N} for N = Start, Start+1, … to Subject and
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
	p := &producer{cfg: cfg, js: js, chunk: chunkSize(cfg.Rate), began: time.Now()}
	return p.run(ctx)
}

type producer struct {
	cfg          ProduceConfig
	js           jetstream.JetStream
	chunk        int64
	began        time.Time
	sent         int64
	nextProgress time.Time
	buf          []byte
}

func chunkSize(rate float64) int64 {
	if rate <= 0 {
		return maxChunk
	}
	return min(max(int64(rate*chunkPeriod.Seconds()), 1), maxChunk)
}

func (p *producer) run(ctx context.Context) (int64, error) {
	defer p.progress()
	p.nextProgress = time.Now().Add(progressEvery)
	for p.cfg.Count == 0 || p.sent < p.cfg.Count {
		n := p.chunk
		if p.cfg.Count > 0 {
			n = min(n, p.cfg.Count-p.sent)
		}
		if p.pace(ctx) != nil || ctx.Err() != nil {
			return p.sent, nil
		}
		if err := p.publish(n); err != nil {
			return p.sent, err
		}
		if time.Now().After(p.nextProgress) {
			p.progress()
		}
	}
	return p.sent, nil
}

// pace waits until the next chunk is due at the configured rate. The
// schedule is absolute (no drift); a producer more than 100ms behind it
// forgets the debt instead of bursting.
func (p *producer) pace(ctx context.Context) error {
	if p.cfg.Rate <= 0 {
		return nil
	}
	due := p.began.Add(time.Duration(float64(p.sent) / p.cfg.Rate * float64(time.Second)))
	wait := time.Until(due)
	if wait < -100*time.Millisecond {
		p.began = p.began.Add(-wait)
		return nil
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publish sends the next n messages and waits for their publish acks. It
// is not interrupted by ctx, so that sent stays exact.
func (p *producer) publish(n int64) error {
	first := p.cfg.Start + p.sent
	futures := make([]jetstream.PubAckFuture, 0, n)
	for i := range n {
		p.buf = AppendRecord(p.buf[:0], first+i)
		f, err := p.js.PublishAsync(p.cfg.Subject, append([]byte(nil), p.buf...))
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
	p.sent += n
	return nil
}

// fail counts the leading acknowledged messages of a failed chunk.
func (p *producer) fail(futures []jetstream.PubAckFuture, first, n int64, err error) error {
	for _, f := range futures {
		if !acked(f) {
			break
		}
		p.sent++
	}
	return fmt.Errorf("produce to %s: publish idx %d..%d: %w", p.cfg.Subject, first, first+n-1, err)
}

func acked(f jetstream.PubAckFuture) bool {
	select {
	case <-f.Ok():
		return true
	default:
		return false
	}
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
