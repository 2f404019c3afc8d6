package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

const (
	// requestTimeout bounds JetStream API requests (stream and consumer
	// lookups at open).
	requestTimeout = 10 * time.Second
	// connectTimeout bounds dialling the server.
	connectTimeout = 5 * time.Second
	// reconnectWait is the pause between reconnect attempts. The client
	// reconnects forever; a job whose server is gone keeps waiting (and
	// its checkpoints keep completing) rather than failing over in a loop.
	reconnectWait = 500 * time.Millisecond
)

// dial connects to url, naming the connection after the subtask so it can
// be told apart in the server's monitoring.
func dial(url string, ctx *runtime.Context, role string) (*nats.Conn, error) {
	log := ctx.Log()
	name := "flinkgo " + role + " " + ctx.JobName() + "/" + ctx.UID() + "[" + strconv.Itoa(ctx.Subtask()) + "]"
	nc, err := nats.Connect(url, nats.Name(name), nats.Timeout(connectTimeout),
		nats.MaxReconnects(-1), nats.ReconnectWait(reconnectWait),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn().Err(err).Str("url", url).Msg("nats disconnected; reconnecting")
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			log.Info().Str("url", c.ConnectedUrlRedacted()).Msg("nats reconnected")
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn().Err(err).Msg("nats client error")
		}))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	return nc, nil
}

// lookupStream finds the stream, with an error naming it when it is missing.
func lookupStream(js jetstream.JetStream, name string) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		// A configuration error: the job fails at once, without restarts.
		return nil, runtime.SuppressRestarts(fmt.Errorf("stream %q does not exist (create it, e.g. flinkgo dev nats --stream %s:<subjects>)", name, name))
	}
	if err != nil {
		return nil, fmt.Errorf("look up stream %q: %w", name, err)
	}
	return st, nil
}

// durableConfig is the consumer a queue source reads through.
func durableConfig(cfg *sourceConfig) jetstream.ConsumerConfig {
	c := jetstream.ConsumerConfig{Durable: cfg.durable, AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.ackWait,
		MaxAckPending: cfg.maxBacklog, MaxDeliver: -1, FilterSubject: cfg.subject}
	switch cfg.start.kind {
	case startNow:
		c.DeliverPolicy = jetstream.DeliverNewPolicy
	case startSeq:
		c.DeliverPolicy, c.OptStartSeq = jetstream.DeliverByStartSequencePolicy, cfg.start.seq
	case startTime:
		at := cfg.start.at
		c.DeliverPolicy, c.OptStartTime = jetstream.DeliverByStartTimePolicy, &at
	default:
		c.DeliverPolicy = jetstream.DeliverAllPolicy
	}
	return c
}

// ensureDurable returns the durable pull consumer of a queue source,
// creating it when missing. An existing consumer keeps its position and
// delivery policy; its ackWait, maxBacklog (MaxAckPending) and filter
// subject are brought in line with the spec. One that cannot serve a
// queue source (push consumer, no explicit acks) is an error naming it.
func ensureDurable(st jetstream.Stream, cfg *sourceConfig, log zerolog.Logger) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	want := durableConfig(cfg)
	c, err := st.Consumer(ctx, cfg.durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		c, err = st.CreateConsumer(ctx, want)
		if errors.Is(err, jetstream.ErrConsumerExists) { // another subtask was first
			c, err = st.Consumer(ctx, cfg.durable)
		}
		if err == nil {
			log.Info().Str("consumer", cfg.durable).Str("stream", cfg.stream).Msg("nats durable consumer created")
			return c, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %q of stream %q: %w", cfg.durable, cfg.stream, err)
	}
	have := c.CachedInfo().Config
	switch {
	case have.DeliverSubject != "":
		return nil, fmt.Errorf("consumer %q of stream %q is a push consumer; the nats source needs a pull consumer: use another durable name or delete it", cfg.durable, cfg.stream)
	case have.AckPolicy != jetstream.AckExplicitPolicy:
		return nil, fmt.Errorf("consumer %q of stream %q has ack policy %s; the nats source needs explicit acks: use another durable name or delete it", cfg.durable, cfg.stream, have.AckPolicy)
	}
	if have.AckWait == want.AckWait && have.MaxAckPending == want.MaxAckPending && have.FilterSubject == want.FilterSubject && len(have.FilterSubjects) == 0 {
		return c, nil
	}
	upd := have
	upd.AckWait, upd.MaxAckPending, upd.FilterSubject, upd.FilterSubjects = want.AckWait, want.MaxAckPending, want.FilterSubject, nil
	if c, err = st.UpdateConsumer(ctx, upd); err != nil {
		return nil, fmt.Errorf("update consumer %q of stream %q (ackWait %s, maxBacklog %d, subject %q): %w", cfg.durable, cfg.stream, want.AckWait, want.MaxAckPending, want.FilterSubject, err)
	}
	log.Info().Str("consumer", cfg.durable).Dur("ack_wait", want.AckWait).Int("max_ack_pending", want.MaxAckPending).Msg("nats durable consumer updated")
	return c, nil
}
