package nats

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// position is a bookmark source's place in its stream: the sequence of
// the next message to read, or, before the first message of a start at a
// time, that time.
type position struct {
	stream string
	next   uint64    // 0: not resolved yet, start at at
	at     time.Time // start time while next is 0
}

// positionVersion is the bookmark's item format: version 2 holds next,
// at, and the stream as a length-prefixed string; version 1 (before the
// state encoder) had the stream run to the end of the item.
const positionVersion = 2

func (p position) encode() []byte {
	e := state.NewEncoder(positionVersion)
	e.Uvarint(p.next)
	var at int64
	if p.next == 0 {
		at = p.at.UnixNano()
	}
	e.Varint(at)
	e.String(p.stream)
	return e.Encoded()
}

func decodePosition(b []byte) (position, error) {
	d := state.NewDecoder("nats bookmark", b, positionVersion)
	p := position{next: d.Uvarint()}
	at := d.Varint()
	if d.Version() == 1 {
		p.stream = string(d.Rest())
	} else {
		p.stream = d.String()
	}
	if p.next == 0 {
		p.at = time.Unix(0, at)
	}
	return p, d.Finish()
}

func (p position) String() string {
	if p.next == 0 {
		return "time " + p.at.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("sequence %d", p.next)
}

// bookmarkSource is the subtask of a bookmark source: an ordered consumer
// (ephemeral, no acks) reading the stream from a position kept in
// checkpoints. A restore resumes at the exact next sequence.
type bookmarkSource struct {
	cfg   *sourceConfig
	ctx   *runtime.Context
	nc    *nats.Conn
	cc    jetstream.ConsumeContext
	in    *inbox
	dec   decoder
	timer *time.Timer
	msgs  []delivery
	pos   position // next to read
	snap  position // of the last snapshot
	lag   *atomic.Int64
	seq   *atomic.Int64
	gap   bool // a gap was reported
	fatal atomic.Pointer[error]
}

func (s *bookmarkSource) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	s.dec = decoder{json: s.cfg.json, skip: s.cfg.skipInvalid, skipped: ctx.Metrics().Counter(gaugeSkipped)}
	s.lag, s.seq = ctx.Metrics().Gauge(gaugeLag), ctx.Metrics().Gauge(gaugeNextSeq)
	restored, err := s.restored()
	if err != nil {
		return err
	}
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
	if !restored {
		if s.pos, err = s.initial(st); err != nil {
			return fmt.Errorf("nats source: %w", err)
		}
	}
	s.snap = s.pos
	s.seq.Store(int64(s.pos.next))
	if err := s.consume(js); err != nil {
		return fmt.Errorf("nats source: %w", err)
	}
	ctx.Log().Info().Str("stream", s.cfg.stream).Str("subject", s.cfg.subject).Stringer("from", s.pos).Bool("restored", restored).
		Msg("nats bookmark source opened")
	return nil
}

// restored takes the position from the restored state, if it has one for
// this stream.
func (s *bookmarkSource) restored() (bool, error) {
	items := s.ctx.OperatorState().Get(bookmarkList)
	if len(items) == 0 {
		if s.ctx.Restored() && s.ctx.OperatorState().Get(queueList) != nil {
			s.ctx.Log().Warn().Msg("restored nats queue bookkeeping ignored: this source is now in bookmark mode and starts at its bookmark option")
		}
		return false, nil
	}
	p, err := decodePosition(items[0])
	if err != nil {
		return false, fmt.Errorf("restore nats source %q: %w", s.ctx.UID(), err)
	}
	if p.stream != s.cfg.stream {
		s.ctx.Log().Warn().Str("restored_stream", p.stream).Str("stream", s.cfg.stream).
			Msg("restored nats bookmark is for another stream; starting at the bookmark option")
		return false, nil
	}
	s.pos = p
	return true, nil
}

// initial resolves the bookmark option (now: after the stream's last
// message at this moment, so a restart does not skip what came since).
func (s *bookmarkSource) initial(st jetstream.Stream) (position, error) {
	p := position{stream: s.cfg.stream}
	switch s.cfg.start.kind {
	case startEpoch:
		p.next = 1
	case startSeq:
		p.next = s.cfg.start.seq
	case startTime:
		p.at = s.cfg.start.at
	case startNow:
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		info, err := st.Info(ctx)
		if err != nil {
			return p, fmt.Errorf("stream %q info: %w", s.cfg.stream, err)
		}
		p.next = info.State.LastSeq + 1
	}
	return p, nil
}

func (s *bookmarkSource) consume(js jetstream.JetStream) error {
	oc := jetstream.OrderedConsumerConfig{}
	if s.cfg.subject != "" {
		oc.FilterSubjects = []string{s.cfg.subject}
	}
	if s.pos.next > 0 {
		oc.DeliverPolicy, oc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, s.pos.next
	} else {
		at := s.pos.at
		oc.DeliverPolicy, oc.OptStartTime = jetstream.DeliverByStartTimePolicy, &at
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, s.cfg.stream, oc)
	if err != nil {
		return fmt.Errorf("ordered consumer on stream %q: %w", s.cfg.stream, err)
	}
	s.in = newInbox(bookmarkInbox)
	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
	s.cc, err = cons.Consume(func(m jetstream.Msg) { s.in.put(delivery{msg: m}) }, jetstream.PullMaxMessages(pullBatch),
		jetstream.ConsumeErrHandler(s.consumeError))
	if err != nil {
		return fmt.Errorf("consume stream %q: %w", s.cfg.stream, err)
	}
	return nil
}

func (s *bookmarkSource) consumeError(_ jetstream.ConsumeContext, err error) {
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		err = fmt.Errorf("nats source: stream %q: %w", s.cfg.stream, err)
		s.fatal.CompareAndSwap(nil, &err)
		return
	}
	s.ctx.Log().Debug().Err(err).Msg("nats ordered consumer error (it recreates itself)")
}

func (s *bookmarkSource) Poll(b *runtime.Batch) error {
	if err := fire(s.ctx, "nats.poll"); err != nil {
		return err
	}
	if p := s.fatal.Load(); p != nil {
		return *p
	}
	s.timer.Reset(pollWait)
	s.msgs = s.in.take(s.msgs[:0], cap(b.Records)-len(b.Records), s.timer, s.ctx.Wakeup())
	s.timer.Stop()
	defer clear(s.msgs)
	for _, d := range s.msgs {
		m := d.msg
		reply := m.Reply()
		info, ok := parseReply(reply)
		if !ok {
			return fmt.Errorf("nats source: unexpected reply subject %q (not a JetStream message?)", reply)
		}
		if info.streamSeq < s.pos.next {
			continue // already emitted (cannot happen with an ordered consumer)
		}
		s.checkGap(info.streamSeq)
		emit, fail := s.dec.check(m.Data())
		if fail {
			return fmt.Errorf("nats source: %w", invalid(fmt.Sprintf("stream %s sequence %d", s.cfg.stream, info.streamSeq), m.Data()))
		}
		s.pos.next, s.pos.at = info.streamSeq+1, time.Time{}
		if emit {
			b.Records = append(b.Records, runtime.Record{Value: m.Data(), Timestamp: info.timestamp / int64(time.Millisecond)})
		}
		s.lag.Store(int64(info.pending))
	}
	s.seq.Store(int64(s.pos.next))
	return nil
}

// checkGap warns once when, without a subject filter, sequences were
// skipped: messages deleted (limits, purge) before they were read.
func (s *bookmarkSource) checkGap(seq uint64) {
	if s.gap || s.cfg.subject != "" || s.pos.next == 0 || seq == s.pos.next {
		return
	}
	s.gap = true
	s.ctx.Log().Warn().Uint64("expected", s.pos.next).Uint64("got", seq).
		Msg("nats stream sequences skipped: messages were deleted before they were read (retention limits or a purge)")
}

// SnapshotState stores the position (the bookmark).
func (s *bookmarkSource) SnapshotState(id int64) error {
	if err := fire(s.ctx, "nats.snapshot", id); err != nil {
		return err
	}
	s.ctx.OperatorState().Set(bookmarkList, state.Union, [][]byte{s.pos.encode()})
	s.snap = s.pos
	return nil
}

// DescribeState shows the bookmark (savepoint inspect).
func (s *bookmarkSource) DescribeState() map[string]any {
	out := map[string]any{"mode": "bookmark", "stream": s.cfg.stream}
	if s.snap.next > 0 {
		out["nextSequence"] = s.snap.next
	} else {
		out["startTime"] = s.snap.at.Format(time.RFC3339Nano)
	}
	return out
}

func (s *bookmarkSource) Close() error {
	if s.in != nil {
		s.in.close()
	}
	if s.cc != nil {
		s.cc.Stop()
	}
	if s.nc != nil {
		s.nc.Close()
	}
	return nil
}
