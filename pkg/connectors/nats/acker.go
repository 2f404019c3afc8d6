package nats

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// Acknowledgement payloads of the JetStream protocol.
var (
	ackPayload      = []byte("+ACK")
	nakPayload      = []byte("-NAK")
	progressPayload = []byte("+WPI") // in progress: restart the AckWait timer
)

// flushTimeout bounds the wait for the server to receive acknowledgements
// that must be on the server before the source goes on (at-most-once acks,
// acks and naks at close).
const flushTimeout = 5 * time.Second

// ackCounters are the gauges the acker keeps current.
type ackCounters struct {
	pending  *atomic.Int64 // received, not yet acknowledged or returned
	acks     *atomic.Int64 // acks sent
	naks     *atomic.Int64 // naks sent
	progress *atomic.Int64 // in-progress keepalives sent
}

// acker sends one subtask's acknowledgements. Acks of messages whose
// covering checkpoint completed are queued (due) and sent by its goroutine
// in batches of size, a partial batch once its oldest ack has waited
// timeout. Naks and at-most-once acks are sent at once on the caller's
// goroutine.
//
// Keepalives: every keepEvery (ackWait/3) the goroutine starts a new
// generation G and sends an in-progress ack for every message still
// outstanding (queued here or held by the source, see outstanding) that
// was delivered in generation G-2 or before, i.e. before the previous
// tick. A message is thus kept alive when it is between 1/3 and 2/3 of
// ackWait old and every ackWait/3 after, so the broker never redelivers a
// message that only waits for its checkpoint, and messages acknowledged
// within ackWait/3 cost no keepalive at all.
//
// A failed send (a fault, a closed connection) is sticky: the goroutine
// stops acking, err reports it (the source then fails the job over) and
// close hands the unsent acks back, to be returned to the queue.
type acker struct {
	nc          *nats.Conn
	fire        func(point string, n int) error
	size        int
	timeout     time.Duration
	keepEvery   time.Duration // 0: no keepalives
	outstanding func(dst []string, gen int64) []string
	log         zerolog.Logger
	c           ackCounters

	gen atomic.Int64 // current keepalive generation

	mu     sync.Mutex
	due    []string
	dueGen int64     // delivery generation of the oldest queued ack
	dueAt  time.Time // when the oldest queued ack became due
	err    error
	unsent []string // acks whose send failed
	wake   chan struct{}
	quit   chan struct{}
	done   chan struct{}
}

// start launches the goroutine; stop ends it.
func (a *acker) start() {
	a.wake, a.quit, a.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go a.loop()
}

// generation is the keepalive generation messages delivered now belong to.
func (a *acker) generation() int64 { return a.gen.Load() }

// enqueue queues acks that became due (their checkpoint completed).
func (a *acker) enqueue(r replies) {
	if len(r.list) == 0 {
		return
	}
	a.mu.Lock()
	if len(a.due) == 0 {
		a.dueAt, a.dueGen = time.Now(), r.gen
	}
	a.due = append(a.due, r.list...)
	a.mu.Unlock()
	signal(a.wake)
}

// failure returns the sticky send error, if any.
func (a *acker) failure() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *acker) loop() {
	defer close(a.done)
	partial := time.NewTimer(time.Hour)
	defer partial.Stop()
	var keep <-chan time.Time
	if a.keepEvery > 0 {
		t := time.NewTicker(a.keepEvery)
		defer t.Stop()
		keep = t.C
	}
	for {
		wait := a.sendDue(time.Now(), false)
		if wait > 0 {
			partial.Reset(wait)
		} else {
			partial.Stop()
		}
		select {
		case <-a.wake:
		case <-partial.C:
		case <-keep:
			a.keepalive()
		case <-a.quit:
			return
		}
	}
}

// sendDue sends the full batches and, when its oldest ack has waited
// timeout (or force), the partial one. It returns how long until the
// partial batch is due (0: none waiting).
func (a *acker) sendDue(now time.Time, force bool) time.Duration {
	due, wait := a.takeDue(now, force)
	for len(due) > 0 {
		batch := due[:min(len(due), a.size)]
		if err := a.send(batch, ackPayload, "nats.ack"); err != nil {
			a.fail(err, due)
			return 0
		}
		a.c.acks.Add(int64(len(batch)))
		due = due[len(batch):]
	}
	return wait
}

// takeDue removes the acks to send now: every full batch, and the partial
// one when due. The rest (less than a batch) stays queued.
func (a *acker) takeDue(now time.Time, force bool) ([]string, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil || len(a.due) == 0 {
		return nil, 0
	}
	n := len(a.due)
	deadline := a.dueAt.Add(a.timeout)
	if !force && now.Before(deadline) {
		n = n / a.size * a.size
	}
	out := a.due[:n:n]
	a.due = append([]string(nil), a.due[n:]...)
	if len(a.due) == 0 {
		return out, 0
	}
	return out, max(deadline.Sub(now), time.Millisecond)
}

func (a *acker) fail(err error, batch []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil {
		a.err = fmt.Errorf("acknowledge %d messages: %w", len(batch), err)
		a.log.Error().Err(err).Int("messages", len(batch)).Msg("nats ack failed; the job fails over and the messages are redelivered")
	}
	a.unsent = append(a.unsent, batch...)
}

// send fires the fault point, then publishes payload to every reply
// subject. The client buffers the publishes and writes them out together.
func (a *acker) send(replies []string, payload []byte, point string) error {
	if err := a.fire(point, len(replies)); err != nil {
		return err
	}
	// Count them as answered before they leave: the client may flush
	// midway, and the server then delivers new messages, which the gauge
	// must not see on top of the old ones.
	a.c.pending.Add(-int64(len(replies)))
	for i, r := range replies {
		if err := a.nc.Publish(r, payload); err != nil {
			a.c.pending.Add(int64(len(replies) - i))
			return err
		}
	}
	return nil
}

// keepalive starts a new generation and sends an in-progress ack for the
// outstanding messages delivered before the previous one.
func (a *acker) keepalive() {
	old := a.gen.Add(1) - 2
	replies := a.outstanding(nil, old)
	a.mu.Lock()
	if len(a.due) > 0 && a.dueGen <= old {
		replies = append(replies, a.due...)
	}
	a.mu.Unlock()
	if len(replies) == 0 {
		return
	}
	for _, r := range replies {
		if err := a.nc.Publish(r, progressPayload); err != nil {
			a.log.Warn().Err(err).Msg("nats in-progress ack failed")
			return
		}
	}
	a.c.progress.Add(int64(len(replies)))
}

// ackNow acknowledges replies at once, in batches of size, and waits
// until the server has received them (at-most-once: before the messages
// are emitted).
func (a *acker) ackNow(replies []string) error {
	for len(replies) > 0 {
		n := min(len(replies), a.size)
		if err := a.send(replies[:n], ackPayload, "nats.ack"); err != nil {
			return fmt.Errorf("acknowledge %d messages: %w", n, err)
		}
		a.c.acks.Add(int64(n))
		replies = replies[n:]
	}
	return a.nc.FlushTimeout(flushTimeout)
}

// nak returns messages to the queue at once (the broker redelivers them).
// A failure is logged: the broker then redelivers them after AckWait.
func (a *acker) nak(replies []string) {
	if len(replies) == 0 {
		return
	}
	if err := a.send(replies, nakPayload, "nats.nak"); err != nil {
		a.log.Warn().Err(err).Int("messages", len(replies)).Msg("nats nak failed; the broker redelivers the messages after ackWait")
		return
	}
	a.c.naks.Add(int64(len(replies)))
}

// stop ends the goroutine and sends the acks still due (partial batch
// included) unless sending failed before. It returns the acks it could
// not send, to be returned to the queue.
func (a *acker) stop() []string {
	if a.quit != nil {
		close(a.quit)
		<-a.done
		a.quit = nil
	}
	a.sendDue(time.Now(), true)
	a.mu.Lock()
	defer a.mu.Unlock()
	out := append(a.unsent, a.due...)
	a.unsent, a.due = nil, nil
	return out
}
