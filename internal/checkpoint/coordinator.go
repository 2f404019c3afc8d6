package checkpoint

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Config is what the coordinator needs of a job's checkpoint settings.
type Config struct {
	Interval          time.Duration // 0: no periodic checkpoints
	Timeout           time.Duration
	MinPause          time.Duration
	MaxConcurrent     int
	TolerableFailures int
	Retained          int
	// PersistFinal writes the final checkpoint of a bounded job like a
	// periodic one (Flink's FLIP-147), so a failure after its commit
	// restores from it instead of replaying the whole input. False when
	// the job has no checkpoint storage.
	PersistFinal bool
	// Record adds a step between a durable _metadata and completion for
	// every snapshot that commits: the driver records it as the job's
	// restore point (the daemon's registry) and reports RecordedEvent.
	// Nothing commits, acks or is discarded by retention before that
	// record is durable, so recovery can never fall behind committed
	// output; a failed record fails the checkpoint (I/O, counted).
	Record bool
}

// Coordinator decides the checkpoint protocol of one job attempt. It is
// pure: Step takes an event (with the current time) and returns decisions
// for the driver to carry out; it never blocks, sleeps or does I/O. Not safe
// for concurrent use: one driver goroutine owns it.
type Coordinator struct {
	cfg      Config
	numTasks int

	nextID      int64
	nextPeriod  time.Time // when the next periodic checkpoint is due
	lastDone    time.Time // completion (or failure) time of the last periodic one
	pending     map[int64]*pending
	terminal    int64 // id of a pending terminal snapshot, 0 if none
	stopped     bool  // a terminal snapshot completed or the job is going down
	failures    int   // consecutive failed periodic checkpoints
	retained    []int64
	queued      []Request // requests waiting for a terminal snapshot to resolve
	firstTicked bool
}

type pending struct {
	id      int64
	kind    Kind
	req     *Request
	trigger time.Time
	acks    map[int]Handle
	persist bool // metadata requested
	record  bool // metadata durable; recording as the restore point
}

// New returns a coordinator for numTasks subtasks. nextID continues the
// numbering of a restored job; retained lists its completed checkpoints
// still on disk, oldest first, so retention goes on discarding them.
func New(cfg Config, numTasks int, nextID int64, retained []int64) *Coordinator {
	if nextID < 1 {
		nextID = 1
	}
	if cfg.MaxConcurrent < 1 {
		cfg.MaxConcurrent = 1
	}
	if cfg.Retained < 1 {
		cfg.Retained = 1
	}
	return &Coordinator{cfg: cfg, numTasks: numTasks, nextID: nextID, pending: map[int64]*pending{},
		retained: append([]int64(nil), retained...)}
}

// Events.
type (
	// Tick lets time pass: periodic triggers and timeouts are decided here.
	Tick struct{ Now time.Time }
	// RequestEvent asks for a savepoint, a stop or the final checkpoint.
	RequestEvent struct {
		Req Request
		Now time.Time
	}
	// AckEvent: a subtask finished its part of checkpoint ID.
	AckEvent struct {
		ID     int64
		Handle Handle
		Now    time.Time
	}
	// DeclineEvent: a subtask could not take its part of checkpoint ID.
	DeclineEvent struct {
		ID   int64
		Task int
		Err  error
		Now  time.Time
	}
	// PersistedEvent: the driver wrote the metadata of ID (Err nil) or failed.
	PersistedEvent struct {
		ID  int64
		Err error
		Now time.Time
	}
	// RecordedEvent: the driver recorded ID as the job's restore point (Err
	// nil) or failed to (see Config.Record).
	RecordedEvent struct {
		ID  int64
		Err error
		Now time.Time
	}
	// ShutdownEvent: the attempt is ending (failure, cancel); pending
	// checkpoints are aborted and nothing new starts.
	ShutdownEvent struct {
		Reason Reason
		Now    time.Time
	}
)

// Decisions.
type (
	// Start: create the snapshot's directory and send the trigger to the
	// sources. Persist says whether state is written (not for Final).
	Start struct {
		ID        int64
		Kind      Kind
		Timestamp time.Time
		Req       *Request
		Persist   bool
	}
	// WriteMetadata: every subtask acknowledged; publish _metadata
	// atomically, then report PersistedEvent.
	WriteMetadata struct {
		ID      int64
		Kind    Kind
		Trigger time.Time
		Handles []Handle // ordered by task
		Drain   bool     // a stop --drain: the input ended before the barrier
	}
	// Record: the snapshot is durable and commits once recorded: record it
	// as the job's restore point, with the retained checkpoints and the
	// next id its completion leaves, durably, then report RecordedEvent.
	Record struct {
		ID       int64
		Kind     Kind
		Retained []int64 // oldest first
		NextID   int64
	}
	// Complete: the snapshot is durable (and recorded, with
	// Config.Record). Notify the subtasks when
	// Kind.Commits(), answer Req, end the job when Kind.Terminal().
	Complete struct {
		ID       int64
		Kind     Kind
		Req      *Request
		Duration time.Duration
	}
	// Abort: the snapshot failed. Remove its partial files (unless Keep),
	// notify the subtasks, answer Req.
	Abort struct {
		ID     int64
		Kind   Kind
		Reason Reason
		Err    error
		Req    *Request
		// Keep: the snapshot is whole and its record write failed, whose
		// outcome may be unknown (an etcd transaction that timed out can
		// still be applied when a quorum returns): the record may name it
		// as the restore point, so its directory stays for the next
		// restore decision, which deletes it if the record does not.
		Keep bool
	}
	// Discard: retention; delete completed checkpoint ID (a newer one is durable).
	Discard struct{ ID int64 }
	// Reject: the request cannot start.
	Reject struct {
		Req    Request
		Reason Reason
	}
	// FailJob: more consecutive failures than tolerated.
	FailJob struct{ Err error }
)

// Event is one of the event types above, and Decision one of the decision
// types: closed sets (their method is unexported), so the driver's and
// Step's type switches name only real cases.
type (
	Event    interface{ event() }
	Decision interface{ decision() }
)

func (Tick) event()           {}
func (RequestEvent) event()   {}
func (AckEvent) event()       {}
func (DeclineEvent) event()   {}
func (PersistedEvent) event() {}
func (ShutdownEvent) event()  {}
func (RecordedEvent) event()  {}

func (Start) decision()         {}
func (WriteMetadata) decision() {}
func (Complete) decision()      {}
func (Abort) decision()         {}
func (Discard) decision()       {}
func (Reject) decision()        {}
func (FailJob) decision()       {}
func (Record) decision()        {}

// Pending returns the ids of checkpoints in progress, in order.
func (c *Coordinator) Pending() []int64 {
	ids := make([]int64, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// NextID is the id the next checkpoint will get.
func (c *Coordinator) NextID() int64 { return c.nextID }

// Retained lists the completed periodic checkpoints kept, oldest first.
func (c *Coordinator) Retained() []int64 { return append([]int64(nil), c.retained...) }

// Wake returns when the driver must send the next Tick (zero: nothing due).
// The driver sends one Tick when it starts, which schedules the first
// periodic checkpoint one interval later.
func (c *Coordinator) Wake() time.Time {
	var t time.Time
	earlier := func(x time.Time) {
		if !x.IsZero() && (t.IsZero() || x.Before(t)) {
			t = x
		}
	}
	// A due checkpoint held back by maxConcurrent waits for an event (an
	// ack, a persisted metadata), not for time: waking for it would spin.
	if c.cfg.Interval > 0 && !c.stopped && c.terminal == 0 && c.firstTicked && c.periodicPending() < c.cfg.MaxConcurrent {
		earlier(c.nextPeriod)
	}
	if c.cfg.Timeout > 0 {
		for _, p := range c.pending {
			earlier(p.trigger.Add(c.cfg.Timeout))
		}
	}
	return t
}

// Step applies one event and returns the decisions, in the order the
// driver must carry them out.
func (c *Coordinator) Step(ev Event) []Decision {
	switch e := ev.(type) {
	case Tick:
		return c.tick(e.Now)
	case RequestEvent:
		return c.request(e.Req, e.Now)
	case AckEvent:
		return c.ack(e)
	case DeclineEvent:
		return c.decline(e)
	case PersistedEvent:
		return c.persisted(e)
	case RecordedEvent:
		return c.recorded(e)
	case ShutdownEvent:
		return c.shutdown(e)
	}
	panic(fmt.Sprintf("checkpoint: unknown event %T (bug)", ev))
}

func (c *Coordinator) tick(now time.Time) []Decision {
	var out []Decision
	for _, id := range c.Pending() {
		p := c.pending[id]
		if c.cfg.Timeout > 0 && !now.Before(p.trigger.Add(c.cfg.Timeout)) {
			out = append(out, c.abort(p, ReasonTimeout, fmt.Errorf("checkpoint %d expired after %s", id, c.cfg.Timeout), now)...)
		}
	}
	if c.cfg.Interval <= 0 || c.stopped {
		return out
	}
	if !c.firstTicked {
		c.firstTicked = true
		c.nextPeriod = now.Add(c.cfg.Interval)
		return out
	}
	if now.Before(c.nextPeriod) || c.terminal != 0 {
		return out
	}
	if c.periodicPending() >= c.cfg.MaxConcurrent {
		return out // due; triggered as soon as one completes
	}
	if c.cfg.MinPause > 0 && !c.lastDone.IsZero() && now.Before(c.lastDone.Add(c.cfg.MinPause)) {
		c.nextPeriod = c.lastDone.Add(c.cfg.MinPause)
		return out
	}
	c.nextPeriod = now.Add(c.cfg.Interval)
	return append(out, c.start(Periodic, nil, now))
}

func (c *Coordinator) periodicPending() int {
	n := 0
	for _, p := range c.pending {
		if p.kind == Periodic {
			n++
		}
	}
	return n
}

func (c *Coordinator) start(kind Kind, req *Request, now time.Time) Start {
	id := c.nextID
	c.nextID++
	c.pending[id] = &pending{id: id, kind: kind, req: req, trigger: now, acks: map[int]Handle{}}
	if kind.Terminal() {
		c.terminal = id
	}
	return Start{ID: id, Kind: kind, Timestamp: now, Req: req, Persist: kind != Final || c.cfg.PersistFinal}
}

func (c *Coordinator) request(r Request, now time.Time) []Decision {
	if c.stopped {
		return []Decision{Reject{Req: r, Reason: ReasonAlreadyStopped}}
	}
	if c.terminal != 0 {
		// One terminal snapshot at a time; the rest wait for its outcome.
		c.queued = append(c.queued, r)
		return nil
	}
	req := r
	return []Decision{c.start(r.Kind, &req, now)}
}

func (c *Coordinator) ack(e AckEvent) []Decision {
	p, ok := c.pending[e.ID]
	if !ok {
		return nil // late ack of an aborted or completed checkpoint
	}
	if _, dup := p.acks[e.Handle.Task]; dup {
		return nil
	}
	p.acks[e.Handle.Task] = e.Handle
	if len(p.acks) < c.numTasks {
		return nil
	}
	if p.kind == Final && !c.cfg.PersistFinal {
		return c.complete(p, e.Now)
	}
	p.persist = true
	hs := make([]Handle, 0, len(p.acks))
	for _, h := range p.acks {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Task < hs[j].Task })
	return []Decision{WriteMetadata{ID: p.id, Kind: p.kind, Trigger: p.trigger, Handles: hs, Drain: p.req != nil && p.req.Drain}}
}

func (c *Coordinator) decline(e DeclineEvent) []Decision {
	p, ok := c.pending[e.ID]
	if !ok {
		return nil
	}
	err := e.Err
	if err == nil {
		err = errors.New("declined")
	}
	if e.Task < 0 {
		// The driver could not start it (no directory, for one).
		return c.abort(p, ReasonDeclined, fmt.Errorf("%s %d could not start: %w", p.kind, e.ID, err), e.Now)
	}
	return c.abort(p, ReasonDeclined, fmt.Errorf("subtask %d declined checkpoint %d: %w", e.Task, e.ID, err), e.Now)
}

func (c *Coordinator) persisted(e PersistedEvent) []Decision {
	p, ok := c.pending[e.ID]
	if !ok || !p.persist {
		return nil
	}
	if e.Err != nil {
		return c.abort(p, ReasonIO, fmt.Errorf("write metadata of checkpoint %d: %w", e.ID, e.Err), e.Now)
	}
	if c.cfg.Record && p.kind.Commits() {
		p.record = true
		kept, _ := c.retention(p)
		return []Decision{Record{ID: p.id, Kind: p.kind, Retained: kept, NextID: c.nextID}}
	}
	return c.complete(p, e.Now)
}

func (c *Coordinator) recorded(e RecordedEvent) []Decision {
	p, ok := c.pending[e.ID]
	if !ok || !p.record {
		return nil
	}
	if e.Err != nil {
		out := c.abort(p, ReasonIO, fmt.Errorf("record %s %d as the job's restore point: %w", p.kind, e.ID, e.Err), e.Now)
		a := out[0].(Abort)
		a.Keep = true
		out[0] = a
		return out
	}
	return c.complete(p, e.Now)
}

// retains reports whether a completed snapshot of kind k is a retained
// checkpoint (in the job's checkpoint directory, subject to retention).
func (c *Coordinator) retains(k Kind) bool {
	return k == Periodic || (k == Final && c.cfg.PersistFinal)
}

// retention returns the checkpoints retained once p completes, oldest
// first, and those it pushes out.
func (c *Coordinator) retention(p *pending) (kept, discarded []int64) {
	kept = append([]int64(nil), c.retained...)
	if !c.retains(p.kind) {
		return kept, nil
	}
	kept = append(kept, p.id)
	if n := len(kept) - c.cfg.Retained; n > 0 {
		return kept[n:], kept[:n]
	}
	return kept, nil
}

func (c *Coordinator) complete(p *pending, now time.Time) []Decision {
	delete(c.pending, p.id)
	out := []Decision{Complete{ID: p.id, Kind: p.kind, Req: p.req, Duration: now.Sub(p.trigger)}}
	if p.kind == Periodic || p.kind == Final {
		c.failures = 0
		c.lastDone = now
	}
	if c.retains(p.kind) {
		kept, discarded := c.retention(p)
		c.retained = kept
		for _, id := range discarded {
			out = append(out, Discard{ID: id})
		}
		// Older periodic checkpoints still pending are subsumed.
		for _, id := range c.Pending() {
			if q := c.pending[id]; id < p.id && q.kind == Periodic {
				out = append(out, c.abort(q, ReasonSubsumed, fmt.Errorf("checkpoint %d subsumed by %d", id, p.id), now)...)
			}
		}
	}
	if p.kind.Terminal() {
		c.terminal = 0
		c.stopped = true
		out = append(out, c.abortAll(ReasonJobStopping, now)...)
		for _, r := range c.queued {
			out = append(out, Reject{Req: r, Reason: ReasonAlreadyStopped})
		}
		c.queued = nil
	}
	return out
}

func (c *Coordinator) abort(p *pending, reason Reason, err error, now time.Time) []Decision {
	delete(c.pending, p.id)
	out := []Decision{Abort{ID: p.id, Kind: p.kind, Reason: reason, Err: err, Req: p.req}}
	if p.kind == Final && reason.CountsAsFailure() && !c.stopped {
		// The sources ended their input and wait for a final checkpoint:
		// take it again (the failure counts, so a disk that keeps failing
		// ends in a failover rather than a loop).
		req := Request{Kind: Final}
		if p.req != nil {
			req = *p.req
		}
		c.queued = append([]Request{req}, c.queued...)
	}
	if p.kind == Periodic || p.kind == Final {
		c.lastDone = now
		if reason.CountsAsFailure() {
			c.failures++
			if c.failures > c.cfg.TolerableFailures && !c.stopped {
				c.stopped = true // the job fails over: start nothing more
				out = append(out, FailJob{Err: fmt.Errorf("%d consecutive checkpoint failures exceed tolerableFailures %d; last: %w", c.failures, c.cfg.TolerableFailures, err)})
			}
		}
	}
	if p.id == c.terminal {
		c.terminal = 0
		if c.stopped {
			return out // failing over: shutdown rejects what is queued
		}
		queued := c.queued
		c.queued = nil
		for _, r := range queued {
			out = append(out, c.request(r, now)...)
		}
	}
	return out
}

func (c *Coordinator) abortAll(reason Reason, now time.Time) []Decision {
	var out []Decision
	for _, id := range c.Pending() {
		out = append(out, c.abort(c.pending[id], reason, fmt.Errorf("checkpoint %d aborted: %s", id, reason), now)...)
	}
	return out
}

func (c *Coordinator) shutdown(e ShutdownEvent) []Decision {
	c.stopped = true
	// Take the queue first: aborting a pending stop would otherwise retry
	// it and reject it as "already stopped" instead of with e.Reason.
	queued := c.queued
	c.queued = nil
	out := c.abortAll(e.Reason, e.Now)
	for _, r := range queued {
		out = append(out, Reject{Req: r, Reason: e.Reason})
	}
	return out
}
