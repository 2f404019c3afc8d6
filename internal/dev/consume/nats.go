package consume

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSConfig configures NATS.
type NATSConfig struct {
	URL     string
	Subject string
	// Count stops after so many messages (0: no limit).
	Count int64
	// Follow keeps reading new messages until ctx ends (or Count).
	Follow bool
}

// NATS calls fn with each message of cfg.Subject, from the start of the
// JetStream stream that captures it (an ordered consumer: nothing is
// acknowledged or changed), and returns how many it read. Without a
// stream for the subject, only Follow can read (core NATS: messages
// published from now on).
func NATS(ctx context.Context, cfg NATSConfig, fn func(Record) error) (int64, error) {
	if cfg.URL == "" || cfg.Subject == "" {
		return 0, errors.New("consume: a server URL and a subject are required")
	}
	nc, err := nats.Connect(cfg.URL, nats.Name("flinkgo dev consume"))
	if err != nil {
		return 0, fmt.Errorf("consume: connect to %s: %w", cfg.URL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, fmt.Errorf("consume: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, requestTimeout)
	stream, err := js.StreamNameBySubject(lctx, cfg.Subject)
	cancel()
	if err != nil {
		if !cfg.Follow {
			return 0, fmt.Errorf("consume: no stream captures subject %q (%v); with --follow the messages published from now on are read", cfg.Subject, err)
		}
		return natsCore(ctx, nc, cfg, fn)
	}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{cfg.Subject}})
	if err != nil {
		return 0, fmt.Errorf("consume: %w", err)
	}
	var n int64
	for cfg.Count == 0 || n < cfg.Count {
		batch, err := cons.FetchNoWait(500)
		if err != nil {
			return n, fmt.Errorf("consume %s: %w", cfg.Subject, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			if cfg.Count > 0 && n >= cfg.Count {
				continue
			}
			meta, _ := m.Metadata()
			r := Record{Value: m.Data()}
			if meta != nil {
				r.Offset, r.Timestamp = int64(meta.Sequence.Stream), meta.Timestamp
			}
			n++
			if err := fn(r); err != nil {
				return n, err
			}
		}
		if got > 0 {
			continue
		}
		if !cfg.Follow {
			info, err := cons.Info(ctx)
			if err == nil && info.NumPending == 0 {
				return n, nil
			}
		}
		select {
		case <-ctx.Done():
			return n, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	return n, nil
}

// natsCore reads messages published on the subject from now on.
func natsCore(ctx context.Context, nc *nats.Conn, cfg NATSConfig, fn func(Record) error) (int64, error) {
	sub, err := nc.SubscribeSync(cfg.Subject)
	if err != nil {
		return 0, fmt.Errorf("consume: subscribe to %s: %w", cfg.Subject, err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // closing anyway
	var n int64
	for cfg.Count == 0 || n < cfg.Count {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return n, nil
			}
			return n, fmt.Errorf("consume %s: %w", cfg.Subject, err)
		}
		n++
		if err := fn(Record{Value: m.Data}); err != nil {
			return n, err
		}
	}
	return n, nil
}
