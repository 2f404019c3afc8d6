package nats

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// queueSource is one subtask of a queue source (and of a bookmark source
// with discardOn: emit): it reads a durable pull consumer that all its
// subtasks share. The client's delivery goroutine puts messages into the
// inbox; Poll, SnapshotState, the notifications and Close run on the
// subtask's goroutine; the acker's goroutine sends the due acks and the
// keepalives.
//
// At-least-once: a message emitted before barrier n is acknowledged when
// checkpoint n (or a later one) completes; when n is aborted its messages
// are returned to the queue (nak); at Close everything not acknowledged is
// returned. At-most-once: the messages of a Poll are acknowledged, and
// the server has received the acks, before the records leave Poll.
// Nothing is replayed from state: the broker redelivers what was not
// acknowledged.
type queueSource struct {
	cfg     *sourceConfig
	ctx     *runtime.Context
	nc      *nats.Conn
	cc      jetstream.ConsumeContext
	in      *inbox
	acks    *acker
	dec     decoder
	timer   *time.Timer
	msgs    []delivery
	replies []string
	orphans []string // taken from the inbox but never emitted: returned at close
	fatal   atomic.Pointer[error]
	logged  atomic.Int64 // unix seconds of the last consume error logged

	mu   sync.Mutex // guards led, which the acker's keepalive reads
	led  ledger
	held int // messages covered by the last snapshot and not yet acked (DescribeState)
}

func (s *queueSource) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	s.dec = decoder{json: s.cfg.json, skip: s.cfg.skipInvalid, skipped: ctx.Metrics().Counter(gaugeSkipped)}
	s.noteRestore()
	var err error
	if s.nc, err = dial(s.cfg.url, ctx, "source"); err != nil {
		return fmt.Errorf("nats source: %w", err)
	}
	js, err := jetstream.New(s.nc)
	if err != nil {
		return fmt.Errorf("nats source: %w", err)
	}
	st, err := lookupStream(js, s.cfg.stream)
	if err != nil {
		return fmt.Errorf("nats source: %w", err)
	}
	cons, err := ensureDurable(st, s.cfg, *ctx.Log())
	if err != nil {
		return fmt.Errorf("nats source: %w", err)
	}
	// The broker never has more than maxBacklog messages of the consumer
	// unacknowledged, so the inbox never blocks the delivery.
	s.in = newInbox(s.cfg.maxBacklog + pullBatch)
	s.acks = s.newAcker()
	s.acks.start()
	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
	s.cc, err = cons.Consume(s.deliver, jetstream.PullMaxMessages(min(pullBatch, s.cfg.maxBacklog)),
		jetstream.ConsumeErrHandler(s.consumeError))
	if err != nil {
		return fmt.Errorf("nats source: consume %q: %w", s.cfg.durable, err)
	}
	s.logOpened()
	return nil
}

func (s *queueSource) newAcker() *acker {
	m := s.ctx.Metrics()
	return &acker{nc: s.nc, size: s.cfg.ackBatchSize, timeout: s.cfg.ackTimeout, keepEvery: s.cfg.ackWait / 3,
		outstanding: s.outstanding, log: *s.ctx.Log(),
		fire: func(point string, n int) error { return fire(s.ctx, point, n) },
		c:    ackCounters{pending: m.Gauge(gaugePending), acks: m.Counter(gaugeAcks), naks: m.Counter(gaugeNaks), progress: m.Counter(gaugeProgress)}}
}

func (s *queueSource) logOpened() {
	semantics := atMostOnce
	if s.cfg.atLeastOnce {
		semantics = atLeastOnce
	}
	ev := s.ctx.Log().Info().Str("stream", s.cfg.stream).Str("consumer", s.cfg.durable).Str("semantics", semantics).
		Int("max_backlog", s.cfg.maxBacklog).Dur("ack_wait", s.cfg.ackWait)
	if interval := s.ctx.Checkpointing().Interval; s.cfg.atLeastOnce && interval > 0 {
		// The backlog is freed only when checkpoints complete.
		ev = ev.Float64("max_rate_per_s", float64(s.cfg.maxBacklog)/interval.Seconds())
	}
	ev.Msg("nats queue source opened")
}

// noteRestore logs what a restore brought: nothing to replay.
func (s *queueSource) noteRestore() {
	if !s.ctx.Restored() {
		return
	}
	if s.ctx.OperatorState().Get(bookmarkList) != nil {
		s.ctx.Log().Warn().Msg("restored nats bookmark ignored: this source now reads a durable consumer (mode queue or discardOn: emit)")
	}
	s.ctx.Log().Info().Str("consumer", s.cfg.durable).
		Msg("nats queue source restored: nothing to replay, the broker redelivers the messages not acknowledged")
}

// deliver runs on the client's delivery goroutine.
func (s *queueSource) deliver(m jetstream.Msg) {
	s.acks.c.pending.Add(1)
	s.in.put(delivery{msg: m, gen: s.acks.generation()})
}

func (s *queueSource) consumeError(_ jetstream.ConsumeContext, err error) {
	if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
		err = fmt.Errorf("nats source: consumer %q of stream %q: %w", s.cfg.durable, s.cfg.stream, err)
		s.fatal.CompareAndSwap(nil, &err)
		return
	}
	now := time.Now().Unix()
	if last := s.logged.Load(); now-last >= 10 && s.logged.CompareAndSwap(last, now) {
		s.ctx.Log().Warn().Err(err).Str("consumer", s.cfg.durable).Msg("nats consume error")
	}
}

func (s *queueSource) Poll(b *runtime.Batch) error {
	if err := fire(s.ctx, "nats.poll"); err != nil {
		return err
	}
	if err := s.failure(); err != nil {
		return err
	}
	s.timer.Reset(pollWait)
	s.msgs = s.in.take(s.msgs[:0], cap(b.Records)-len(b.Records), s.timer, s.ctx.Wakeup())
	s.timer.Stop()
	if len(s.msgs) == 0 {
		return nil
	}
	start := len(b.Records)
	replies, err := s.convert(b)
	if s.cfg.atLeastOnce {
		s.mu.Lock()
		for i, r := range replies {
			s.led.emit(r, s.msgs[i].gen)
		}
		s.mu.Unlock()
		clear(s.msgs)
		return err
	}
	clear(s.msgs)
	if aerr := s.acks.ackNow(replies); aerr != nil {
		clear(b.Records[start:])
		b.Records = b.Records[:start]
		s.orphans = append(s.orphans, replies...)
		return fmt.Errorf("nats source: %w", aerr)
	}
	return err
}

// convert appends the taken messages to b as records and returns the
// reply subjects of those to acknowledge (emitted or skipped). A payload
// that fails to decode stops it: that message and the rest are kept to be
// returned to the queue at close.
func (s *queueSource) convert(b *runtime.Batch) ([]string, error) {
	replies := s.replies[:0]
	for i, d := range s.msgs {
		reply := d.msg.Reply()
		emit, fail := s.dec.check(d.msg.Data())
		if fail {
			for _, rest := range s.msgs[i:] {
				s.orphans = append(s.orphans, rest.msg.Reply())
			}
			return replies, fmt.Errorf("nats source: %w", invalid(s.where(reply), d.msg.Data()))
		}
		replies = append(replies, reply)
		if emit {
			b.Records = append(b.Records, record(d.msg, reply))
		}
	}
	s.replies = replies
	return replies, nil
}

func (s *queueSource) where(reply string) string {
	info, _ := parseReply(reply)
	return fmt.Sprintf("stream %s sequence %d", s.cfg.stream, info.streamSeq)
}

// record makes the record of a message: its payload, and the time the
// stream stored it as event time.
func record(m jetstream.Msg, reply string) runtime.Record {
	r := runtime.Record{Value: m.Data()}
	if info, ok := parseReply(reply); ok {
		r.Timestamp = info.timestamp / int64(time.Millisecond)
	}
	return r
}

func (s *queueSource) failure() error {
	if p := s.fatal.Load(); p != nil {
		return *p
	}
	if err := s.acks.failure(); err != nil {
		return fmt.Errorf("nats source: %w", err)
	}
	return nil
}

// SnapshotState closes the messages emitted so far under checkpoint id.
// The state holds bookkeeping only: a queue is never replayed.
func (s *queueSource) SnapshotState(id int64) error {
	if err := fire(s.ctx, "nats.snapshot", id); err != nil {
		return err
	}
	s.mu.Lock()
	s.led.snapshot(id)
	s.held = s.led.len()
	s.mu.Unlock()
	note := state.NewEncoder(queueNoteVersion)
	note.String(s.cfg.durable)
	s.ctx.OperatorState().Set(queueList, state.Split, [][]byte{note.Encoded()})
	return nil
}

// DescribeState shows the consumer and the messages awaiting their
// checkpoint (savepoint inspect).
func (s *queueSource) DescribeState() map[string]any {
	out := map[string]any{"mode": "queue", "stream": s.cfg.stream, "consumer": s.cfg.durable,
		"replay": "none (the broker redelivers unacknowledged messages)"}
	if s.cfg.atLeastOnce {
		out["unacknowledged"] = s.held
	}
	return out
}

// NotifyCheckpointComplete queues the acks of every message covered by
// checkpoints up to id. A failed ack fails the job over.
func (s *queueSource) NotifyCheckpointComplete(id int64) error {
	s.mu.Lock()
	replies := s.led.complete(id)
	s.mu.Unlock()
	s.acks.enqueue(replies)
	return s.failure()
}

// NotifyCheckpointAborted returns the messages checkpoint id covered to
// the queue: the broker delivers them again.
func (s *queueSource) NotifyCheckpointAborted(id int64) {
	s.mu.Lock()
	replies := s.led.abort(id)
	s.mu.Unlock()
	if len(replies) > 0 {
		s.ctx.Log().Info().Int64("checkpoint_id", id).Int("messages", len(replies)).Msg("checkpoint aborted; its messages are returned to the queue")
		s.acks.nak(replies)
	}
}

// outstanding appends the messages the source holds (inbox and ledger)
// delivered in generation gen or before, for the acker's keepalives;
// called on the acker's goroutine.
func (s *queueSource) outstanding(dst []string, gen int64) []string {
	dst = s.in.appendOld(dst, gen)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.led.appendOld(dst, gen)
}

// Close stops consuming, sends the acks that are due (their checkpoint
// completed), returns every other message to the queue and disconnects.
func (s *queueSource) Close() error {
	var back []string
	if s.in != nil {
		back = s.in.close()
	}
	if s.cc != nil {
		s.cc.Drain()
		select {
		case <-s.cc.Closed():
		case <-time.After(closeDrainTimeout):
		}
		back = append(back, s.in.drain()...)
	}
	if s.acks != nil {
		back = append(back, s.acks.stop()...)
		s.mu.Lock()
		back = append(back, s.led.drain()...)
		s.mu.Unlock()
		back = append(back, s.orphans...)
		s.acks.nak(back)
		s.acks.c.pending.Store(0)
	}
	if s.nc != nil {
		_ = s.nc.FlushTimeout(flushTimeout)
		s.nc.Close()
	}
	return nil
}
