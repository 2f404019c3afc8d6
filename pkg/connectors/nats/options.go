package nats

import (
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Defaults of the source's options (see the package documentation).
const (
	// defaultMaxBacklog bounds the unacknowledged messages of a queue
	// source (the consumer's MaxAckPending). An at-least-once queue holds
	// every message until the checkpoint covering it completes, so its
	// throughput is at most maxBacklog messages per checkpoint interval.
	defaultMaxBacklog = 10_000
	// defaultAckBatchSize and defaultAckTimeout: due acks go out in
	// batches of this many, a partial batch at the latest this long after
	// its oldest ack became due.
	defaultAckBatchSize = 500
	defaultAckTimeout   = 100 * time.Millisecond
	// defaultAckWait is the consumer's AckWait (the broker redelivers a
	// message not acknowledged for this long). Short, unlike NATS's 30s:
	// the source keeps waiting messages alive with in-progress acks every
	// ackWait/3, so AckWait only decides how long the messages a crashed
	// daemon held wait before redelivery (docs/nats.md, "AckWait and
	// keepalives").
	defaultAckWait = 5 * time.Second
	// minAckWait is the shortest ackWait accepted (see checkAckWait).
	minAckWait = time.Second
)

// Source modes, queue semantics, delivery guarantees and discard points,
// as written in a spec.
const (
	modeBookmark = "bookmark"
	modeQueue    = "queue"
	atLeastOnce  = "at-least-once"
	atMostOnce   = "at-most-once"
	onCheckpoint = "checkpoint"
	onEmit       = "emit"
)

// sourceOptions are the YAML options of the nats source.
type sourceOptions struct {
	URL           string `yaml:"url,required"`    // nats://host:port[,nats://…]
	Stream        string `yaml:"stream,required"` // JetStream stream
	Mode          string `yaml:"mode,required"`   // bookmark, queue
	Subject       string `yaml:"subject"`         // filter subject (optional)
	Format        string `yaml:"format"`          // raw (default), json
	OnDecodeError string `yaml:"onDecodeError"`   // fail (default), skip

	// bookmark mode
	Bookmark          any    `yaml:"bookmark"`          // epoch (default), now, a sequence, an RFC 3339 time
	DeliveryGuarantee string `yaml:"deliveryGuarantee"` // at-least-once (default), at-most-once
	DiscardOn         string `yaml:"discardOn"`         // checkpoint (default), emit

	// queue mode (durable, maxBacklog and ackWait also for discardOn: emit)
	Durable        string        `yaml:"durable"`
	QueueSemantics string        `yaml:"queueSemantics"` // at-least-once, at-most-once (required)
	MaxBacklog     *int          `yaml:"maxBacklog"`
	AckBatchSize   *int          `yaml:"ackBatchSize"`
	AckTimeout     *api.Duration `yaml:"ackTimeout"`
	AckWait        *api.Duration `yaml:"ackWait"`
}

// startKind says where a bookmark source without restored state starts.
type startKind uint8

const (
	startEpoch startKind = iota + 1 // the first message of the stream
	startNow                        // after the last message at open
	startSeq                        // at a stream sequence
	startTime                       // at the first message stored at or after a time
)

type startPos struct {
	kind startKind
	seq  uint64
	at   time.Time
}

func (p startPos) String() string {
	switch p.kind {
	case startEpoch:
		return "epoch"
	case startNow:
		return "now"
	case startSeq:
		return "sequence " + strconv.FormatUint(p.seq, 10)
	case startTime:
		return p.at.Format(time.RFC3339Nano)
	}
	return "unknown"
}

// sourceConfig is the checked form of sourceOptions.
type sourceConfig struct {
	uid         string
	url         string
	stream      string
	subject     string
	json        bool
	skipInvalid bool
	bookmark    bool     // bookmark mode with bookmarks in checkpoints
	start       startPos // bookmark: start without state; emit: where a new durable starts

	// queue mode and bookmark mode with discardOn: emit
	durable      string
	atLeastOnce  bool
	ordered      bool // bookmark with discardOn: emit (one subtask)
	maxBacklog   int
	ackBatchSize int
	ackTimeout   time.Duration
	ackWait      time.Duration
}

// checker reports problems with options through a ConfigContext and
// remembers whether there were any.
type checker struct {
	c   *runtime.ConfigContext
	bad bool
}

func (k *checker) errorf(field, format string, args ...any) {
	k.c.Errorf(field, format, args...)
	k.bad = true
}

func configureSource(c *runtime.ConfigContext) *runtime.Plan {
	var o sourceOptions
	c.Decode(&o)
	k := &checker{c: c}
	cfg := &sourceConfig{uid: c.Op.UID, url: o.URL, stream: o.Stream, subject: o.Subject}
	k.common(&o, cfg)
	switch o.Mode {
	case modeBookmark:
		k.bookmark(&o, cfg)
	case modeQueue:
		k.queue(&o, cfg)
	case "":
	default:
		k.errorf("mode", "must be bookmark (replay the stream from a position kept in checkpoints) or queue (a durable consumer with acknowledgements), got %q", o.Mode)
	}
	if k.bad {
		return nil
	}
	return &runtime.Plan{SkipBadTimestamps: cfg.skipInvalid, NewSource: func() runtime.Source { return newSource(cfg) }}
}

func (k *checker) common(o *sourceOptions, cfg *sourceConfig) {
	if k.c.Has("url") && strings.TrimSpace(o.URL) == "" {
		k.errorf("url", "empty server URL (e.g. nats://127.0.0.1:4222)")
	}
	if k.c.Has("stream") && !validName(o.Stream) {
		k.errorf("stream", "%q is not a stream name (no spaces, '.', '*' or '>')", o.Stream)
	}
	if o.Subject != "" && !validSubject(o.Subject, true) {
		k.errorf("subject", "%q is not a subject (tokens separated by '.', wildcards * and > allowed)", o.Subject)
	}
	switch o.Format {
	case "", "raw":
	case "json":
		cfg.json = true
	default:
		k.errorf("format", "must be raw or json, got %q", o.Format)
	}
	switch o.OnDecodeError {
	case "", "fail":
	case "skip":
		cfg.skipInvalid = true
	default:
		k.errorf("onDecodeError", "must be fail or skip, got %q", o.OnDecodeError)
	}
	if o.OnDecodeError != "" && !cfg.json {
		k.errorf("onDecodeError", "applies only with format: json (format raw never fails to decode)")
	}
}

// only reports the options of fields that the mode does not use.
func (k *checker) only(why string, fields ...string) {
	for _, f := range fields {
		if k.c.Has(f) {
			k.errorf(f, "applies only %s", why)
		}
	}
}

func (k *checker) bookmark(o *sourceOptions, cfg *sourceConfig) {
	k.only("with mode: queue", "queueSemantics", "ackBatchSize", "ackTimeout")
	cfg.start = k.parseBookmark(o.Bookmark)
	discard := onCheckpoint
	switch o.DiscardOn {
	case "", onCheckpoint:
	case onEmit:
		discard = onEmit
	default:
		k.errorf("discardOn", "must be checkpoint (keep the bookmark in checkpoints) or emit (move a durable broker-side position when a message is emitted), got %q", o.DiscardOn)
	}
	switch o.DeliveryGuarantee {
	case "":
	case atLeastOnce:
		if discard == onEmit {
			k.errorf("deliveryGuarantee", "at-least-once needs the bookmark kept in checkpoints (discardOn: checkpoint); with discardOn: emit the position moves when a message is emitted, which is at-most-once")
		}
	case atMostOnce:
		if o.DiscardOn == onCheckpoint {
			k.errorf("deliveryGuarantee", "at-most-once moves the position when a message is emitted: set discardOn: emit (or deliveryGuarantee: at-least-once)")
		} else {
			discard = onEmit
		}
	default:
		k.errorf("deliveryGuarantee", "must be at-least-once (bookmarks kept in checkpoints) or at-most-once (discardOn: emit), got %q", o.DeliveryGuarantee)
	}
	if k.c.Op.Parallelism > 1 {
		k.errorf("parallelism", "bookmark mode reads one stream in order and keeps one position, so it runs as one subtask: set parallelism: 1 on this operator (the operators after it may keep parallelism %d), or use mode: queue to share the stream among subtasks", k.c.Op.Parallelism)
	}
	if discard == onEmit {
		k.emitMode(o, cfg)
		return
	}
	k.only("with mode: queue or discardOn: emit", "durable", "maxBacklog", "ackWait")
	cfg.bookmark = true
	if !k.c.Checkpointing.Enabled() {
		field := "mode"
		if k.c.Has("discardOn") {
			field = "discardOn"
		}
		k.errorf(field, "bookmark mode keeps the stream position (the bookmark) in checkpoints, and this job has no checkpointing: "+
			"the position would never be saved (every restart would replay from bookmark %s again) and bookmarks would pile up with nothing to discard them. "+
			"Enable checkpointing (checkpointing: {interval: 10s}) for replay from the last checkpoint, "+
			"or set discardOn: emit to move a durable broker-side position when messages are emitted (at-most-once across restarts)", cfg.start)
	}
}

// emitMode configures bookmark mode with discardOn: emit: an at-most-once
// reader of a durable consumer, in stream order.
func (k *checker) emitMode(o *sourceOptions, cfg *sourceConfig) {
	if o.Durable == "" {
		k.errorf("durable", "discardOn: emit keeps the position in a durable consumer on the broker: set durable: <consumer name>")
	} else if !validName(o.Durable) {
		k.errorf("durable", "%q is not a consumer name (no spaces, '.', '*' or '>')", o.Durable)
	}
	cfg.durable, cfg.ordered = o.Durable, true
	k.backlog(o, cfg)
}

func (k *checker) queue(o *sourceOptions, cfg *sourceConfig) {
	k.only("with mode: bookmark", "bookmark", "deliveryGuarantee", "discardOn")
	cfg.start = startPos{kind: startEpoch}
	if o.Durable == "" {
		k.errorf("durable", "missing durable: queue mode reads through a durable pull consumer that keeps the unacknowledged messages on the broker (its subtasks share it): set durable: <consumer name>")
	} else if !validName(o.Durable) {
		k.errorf("durable", "%q is not a consumer name (no spaces, '.', '*' or '>')", o.Durable)
	}
	cfg.durable = o.Durable
	switch o.QueueSemantics {
	case atLeastOnce:
		cfg.atLeastOnce = true
	case atMostOnce:
	case "":
		k.errorf("queueSemantics", "missing queueSemantics: at-least-once (acknowledge when the checkpoint covering a message completes; needs checkpointing) or at-most-once (acknowledge when a message is emitted)")
	default:
		k.errorf("queueSemantics", "must be at-least-once or at-most-once, got %q", o.QueueSemantics)
	}
	k.backlog(o, cfg)
	if !cfg.atLeastOnce {
		k.only("with queueSemantics: at-least-once (at-most-once acknowledges each message before emitting it, nothing waits)", "ackTimeout")
		return
	}
	if !k.c.Checkpointing.Enabled() {
		k.errorf("queueSemantics", "at-least-once acknowledges a message only when a checkpoint covering it completes, and this job has no checkpointing: "+
			"the source would receive maxBacklog (%d) messages, never acknowledge them and then stall forever. "+
			"Enable checkpointing (checkpointing: {interval: 10s}) or use queueSemantics: at-most-once", cfg.maxBacklog)
	}
}

// backlog reads maxBacklog, ackBatchSize, ackTimeout and ackWait.
func (k *checker) backlog(o *sourceOptions, cfg *sourceConfig) {
	cfg.maxBacklog = defaultMaxBacklog
	if o.MaxBacklog != nil {
		if cfg.maxBacklog = *o.MaxBacklog; cfg.maxBacklog < 1 {
			k.errorf("maxBacklog", "must be at least 1, got %d", cfg.maxBacklog)
		}
	}
	cfg.ackBatchSize = min(defaultAckBatchSize, cfg.maxBacklog)
	if o.AckBatchSize != nil {
		cfg.ackBatchSize = *o.AckBatchSize
		switch {
		case cfg.ackBatchSize < 1:
			k.errorf("ackBatchSize", "must be at least 1, got %d", cfg.ackBatchSize)
		case cfg.ackBatchSize > cfg.maxBacklog:
			k.errorf("ackBatchSize", "%d exceeds maxBacklog %d: no more than maxBacklog messages are ever unacknowledged, so such a batch could never fill", cfg.ackBatchSize, cfg.maxBacklog)
		}
	}
	cfg.ackTimeout = defaultAckTimeout
	if o.AckTimeout != nil {
		if cfg.ackTimeout = o.AckTimeout.D(); cfg.ackTimeout <= 0 {
			k.errorf("ackTimeout", "must be more than 0, e.g. 100ms")
		}
	}
	cfg.ackWait = defaultAckWait
	if o.AckWait != nil {
		cfg.ackWait = o.AckWait.D()
		k.checkAckWait(cfg)
	}
}

// checkAckWait refuses an ackWait too short for the keepalives: while a
// message waits for its checkpoint, the source sends an in-progress ack
// every ackWait/3; below minAckWait a pause of the process (GC, a slow
// disk, a busy machine) would let the broker redeliver messages that are
// only waiting, and the keepalive traffic would grow out of proportion.
func (k *checker) checkAckWait(cfg *sourceConfig) {
	if cfg.ackWait < minAckWait {
		k.errorf("ackWait", "%s is too short: messages waiting for their checkpoint are kept alive with an in-progress ack every ackWait/3, "+
			"and below %s a short pause of the process would let the broker redeliver them (duplicates); use at least %s (default %s)",
			cfg.ackWait, minAckWait, minAckWait, defaultAckWait)
	}
}

// parseBookmark reads epoch (the default), now, a stream sequence (1 or
// more) or an RFC 3339 time.
func (k *checker) parseBookmark(v any) startPos {
	switch x := v.(type) {
	case nil:
		return startPos{kind: startEpoch}
	case int64:
		if x >= 1 {
			return startPos{kind: startSeq, seq: uint64(x)}
		}
	case uint64:
		if x >= 1 {
			return startPos{kind: startSeq, seq: x}
		}
	case string:
		switch x {
		case "epoch":
			return startPos{kind: startEpoch}
		case "now":
			return startPos{kind: startNow}
		}
		if n, err := strconv.ParseUint(x, 10, 64); err == nil && n >= 1 {
			return startPos{kind: startSeq, seq: n}
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return startPos{kind: startTime, at: t}
		}
	case time.Time:
		return startPos{kind: startTime, at: x}
	}
	k.errorf("bookmark", "must be epoch (the first message), now (after the last message), a stream sequence (1 or more) or a time (RFC 3339, e.g. 2024-05-01T12:00:00Z), got %v", v)
	return startPos{kind: startEpoch}
}

// validName reports whether s can name a stream or consumer.
func validName(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r\n.*>/\\")
}

// validSubject reports whether s is a subject (with wildcards when
// allowed).
func validSubject(s string, wildcards bool) bool {
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	toks := strings.Split(s, ".")
	for i, t := range toks {
		switch {
		case t == "":
			return false
		case t == ">" && (!wildcards || i != len(toks)-1):
			return false
		case t == "*" && !wildcards:
			return false
		case strings.ContainsAny(t, "*>") && len(t) > 1:
			return false
		}
	}
	return true
}
