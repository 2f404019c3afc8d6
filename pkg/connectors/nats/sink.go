package nats

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/state"
)

const (
	// defaultPublishTimeout bounds the wait for a publish ack, and a
	// checkpoint's wait for all of them.
	defaultPublishTimeout = 30 * time.Second
	// maxPublishPending bounds the publishes awaiting their ack; Process
	// waits beyond it (backpressure).
	maxPublishPending = 4096
	// publishersList is the sink's state: the sequence of each subtask
	// (versioned items). Snapshots of flinkgo before the state encoder hold
	// legacyPublisherList instead (two uvarints); both are read.
	publishersList      = "publishers"
	legacyPublisherList = "publisher"
	publisherVersion    = 1
	// gaugePublishPending: publishes awaiting their ack.
	gaugePublishPending = "pendingPublishAcks"
)

// sinkOptions are the YAML options of the nats.
type sinkOptions struct {
	URL            string        `yaml:"url,required"`
	Subject        string        `yaml:"subject"`     // literal subject
	SubjectExpr    string        `yaml:"subjectExpr"` // or an expression per record
	MsgIDPrefix    *string       `yaml:"msgIdPrefix"` // default "<job name>/<uid>"
	PublishTimeout *api.Duration `yaml:"publishTimeout"`
}

type sinkConfig struct {
	url            string
	subject        string
	subjectExpr    *expr.Program // nil: subject
	idPrefix       string
	publishTimeout time.Duration
}

func configureSink(c *runtime.ConfigContext) *runtime.Plan {
	var o sinkOptions
	c.Decode(&o)
	k := &checker{c: c}
	cfg := sinkConfig{url: o.URL, subject: o.Subject, publishTimeout: defaultPublishTimeout}
	if c.Has("url") && o.URL == "" {
		k.errorf("url", "empty server URL (e.g. nats://127.0.0.1:4222)")
	}
	switch {
	case o.Subject != "" && o.SubjectExpr != "":
		k.errorf("subjectExpr", "set either subject or subjectExpr, not both")
	case o.Subject == "" && o.SubjectExpr == "":
		k.errorf("", "missing subject: set subject (or subjectExpr, an expression computing it per record)")
	case o.Subject != "" && !validSubject(o.Subject, false):
		k.errorf("subject", "%q is not a subject to publish to (tokens separated by '.', no wildcards)", o.Subject)
	case o.SubjectExpr != "":
		p, err := expr.CompileWith(k.c.Schema, o.SubjectExpr, expr.Any)
		if err != nil {
			k.errorf("subjectExpr", "cannot compile expression %q: %v", o.SubjectExpr, err)
		}
		cfg.subjectExpr = p
	}
	cfg.idPrefix = c.Op.UID
	if c.Job.Name != "" {
		cfg.idPrefix = c.Job.Name + "/" + c.Op.UID
	}
	if o.MsgIDPrefix != nil {
		cfg.idPrefix = *o.MsgIDPrefix
	}
	if o.PublishTimeout != nil {
		if cfg.publishTimeout = o.PublishTimeout.D(); cfg.publishTimeout <= 0 {
			k.errorf("publishTimeout", "must be more than 0, e.g. 30s")
		}
	}
	if k.bad {
		return nil
	}
	return &runtime.Plan{NewOperator: func() runtime.Operator {
		s := &sink{cfg: cfg}
		if cfg.subjectExpr != nil {
			s.subj = cfg.subjectExpr.Clone()
		}
		return s
	}}
}

// sink is one subtask of the nats: at-least-once publishing to
// JetStream. Publishes are asynchronous; SnapshotState waits until every
// publish so far is acknowledged by the stream (a failed one fails the
// checkpoint and the job), so a completed checkpoint never covers a
// message that is not stored.
//
// Every message carries a Nats-Msg-Id "<msgIdPrefix>/<subtask>/<n>", n
// counting the subtask's records, restored from the checkpoint. After a
// restore, a deterministic upstream (a replayable source, deterministic
// operators, the same parallelism) hands this subtask the same records in
// the same order, so the replayed records get the ids they had before the
// failure, and the stream drops them as duplicates within its duplicate
// window (2 minutes by default): effectively exactly-once into the stream.
// Where the upstream is not deterministic (a queue source, several inputs
// interleaving, another parallelism) ids do not match and replays are
// stored again: at-least-once.
type sink struct {
	cfg   sinkConfig
	subj  *expr.Program
	ctx   *runtime.Context
	nc    *nats.Conn
	js    jetstream.JetStream
	seq   uint64
	keep  []publisher // restored sequences of subtasks beyond the parallelism (subtask 0 carries them)
	arena runtime.Arena
	id    []byte
	sbuf  []byte

	mu  sync.Mutex
	err error // first failed publish
}

func (s *sink) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	if err := s.restore(); err != nil {
		return err
	}
	var err error
	if s.nc, err = dial(s.cfg.url, ctx, "sink"); err != nil {
		return fmt.Errorf("nats sink: %w", err)
	}
	s.js, err = jetstream.New(s.nc, jetstream.WithPublishAsyncMaxPending(maxPublishPending),
		jetstream.WithPublishAsyncTimeout(s.cfg.publishTimeout), jetstream.WithPublishAsyncErrHandler(s.failed))
	if err != nil {
		return fmt.Errorf("nats sink: %w", err)
	}
	if s.subj == nil {
		rctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		if _, err := s.js.StreamNameBySubject(rctx, s.cfg.subject); err != nil {
			return fmt.Errorf("nats sink: no stream captures subject %q (%w): the sink publishes to JetStream and waits for its acks", s.cfg.subject, err)
		}
	}
	return nil
}

// restore takes this subtask's sequence from the restored state. The list
// is a union: every subtask sees every entry and keeps its own; subtask 0
// also keeps those of subtasks that no longer exist, so their ids are not
// reused if the parallelism grows again.
func (s *sink) restore() error {
	o := s.ctx.OperatorState()
	items, legacy := o.Get(publishersList), false
	if items == nil {
		items, legacy = o.Get(legacyPublisherList), true
	}
	for _, it := range items {
		p, err := decodePublisher(it, legacy)
		if err != nil {
			return fmt.Errorf("restore nats sink %q: %w", s.ctx.UID(), err)
		}
		switch {
		case p.subtask == s.ctx.Subtask():
			s.seq = p.seq
		case p.subtask >= s.ctx.Parallelism() && s.ctx.Subtask() == 0:
			s.keep = append(s.keep, p)
		}
	}
	return nil
}

// publisher is one subtask's entry in the sink's state.
type publisher struct {
	subtask int
	seq     uint64
}

func (p publisher) encode() []byte {
	e := state.NewEncoder(publisherVersion)
	e.Uvarint(uint64(p.subtask))
	e.Uvarint(p.seq)
	return e.Encoded()
}

// decodePublisher reads an item of publishersList, or of
// legacyPublisherList (the same fields without a version byte).
func decodePublisher(b []byte, legacy bool) (publisher, error) {
	if legacy {
		b = append([]byte{publisherVersion}, b...)
	}
	d := state.NewDecoder("nats sink sequence", b, publisherVersion)
	p := publisher{subtask: int(min(d.Uvarint(), 1<<31-1)), seq: d.Uvarint()}
	return p, d.Finish()
}

func (s *sink) failed(_ jetstream.JetStream, m *nats.Msg, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = fmt.Errorf("nats sink: publish to %q (id %s): %w", m.Subject, m.Header.Get(jetstream.MsgIDHeader), err)
	}
}

func (s *sink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sink) Process(b *runtime.Batch, _ runtime.Output) error {
	if err := fire(s.ctx, "nats.publish", len(b.Records)); err != nil {
		return err
	}
	if err := s.failure(); err != nil {
		return err
	}
	for i := range b.Records {
		r := &b.Records[i]
		s.seq++
		subject, err := s.subjectOf(r)
		if err != nil {
			return fmt.Errorf("nats sink %q subtask %d, record %d: %w", s.ctx.UID(), s.ctx.Subtask(), s.seq, err)
		}
		m := &nats.Msg{Subject: subject, Data: s.arena.Copy(r.Value), Header: nats.Header{}}
		m.Header[jetstream.MsgIDHeader] = []string{s.msgID()}
		if _, err := s.js.PublishMsgAsync(m, jetstream.WithStallWait(s.cfg.publishTimeout)); err != nil {
			return fmt.Errorf("nats sink: publish to %q: %w", subject, err)
		}
	}
	s.ctx.Metrics().Gauge(gaugePublishPending).Store(int64(s.js.PublishAsyncPending()))
	return nil
}

func (s *sink) msgID() string {
	s.id = append(s.id[:0], s.cfg.idPrefix...)
	s.id = append(s.id, '/')
	s.id = strconv.AppendInt(s.id, int64(s.ctx.Subtask()), 10)
	s.id = append(s.id, '/')
	s.id = strconv.AppendUint(s.id, s.seq, 10)
	return string(s.id)
}

func (s *sink) subjectOf(r *runtime.Record) (string, error) {
	if s.subj == nil {
		return s.cfg.subject, nil
	}
	v, err := s.subj.Eval(r)
	if err != nil {
		return "", fmt.Errorf("subjectExpr: %w", err)
	}
	if s.sbuf, err = expr.AppendValue(s.sbuf[:0], v); err != nil {
		return "", fmt.Errorf("subjectExpr: %w", err)
	}
	if !validSubject(string(s.sbuf), false) {
		return "", fmt.Errorf("subjectExpr gave %q, not a subject", s.sbuf)
	}
	return string(s.sbuf), nil
}

// SnapshotState waits until every publish so far is acknowledged (or the
// first failure, or publishTimeout), then stores the sequence.
func (s *sink) SnapshotState(id int64) error {
	select {
	case <-s.js.PublishAsyncComplete():
	case <-time.After(s.cfg.publishTimeout):
		return fmt.Errorf("nats sink: checkpoint %d: %d publishes not acknowledged after %s", id, s.js.PublishAsyncPending(), s.cfg.publishTimeout)
	}
	s.ctx.Metrics().Gauge(gaugePublishPending).Store(0)
	if err := s.failure(); err != nil {
		return fmt.Errorf("checkpoint %d: %w", id, err)
	}
	items := [][]byte{publisher{subtask: s.ctx.Subtask(), seq: s.seq}.encode()}
	for _, p := range s.keep {
		items = append(items, p.encode())
	}
	s.ctx.OperatorState().Set(publishersList, state.Union, items)
	return nil
}

// DescribeState shows the sequence reached (savepoint inspect).
func (s *sink) DescribeState() map[string]any {
	return map[string]any{"msgIdPrefix": s.cfg.idPrefix, "published": s.seq}
}

func (s *sink) Close() error {
	if s.nc != nil {
		s.nc.Close()
	}
	return nil
}
