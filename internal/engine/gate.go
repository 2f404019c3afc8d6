package engine

import (
	"errors"
	"sync"
	"time"
)

// ErrCanceled is returned by blocking gate operations when the subtask or
// job is canceled.
var ErrCanceled = errors.New("canceled")

// Gate is a subtask's input: one bounded FIFO channel per upstream subtask,
// plus a queue of control messages from the job (checkpoint triggers and
// notifications). It is Flink's InputGate: channels can be blocked
// individually, which is what barrier alignment needs, and a full channel
// blocks only its producer, which is backpressure.
//
// Each channel has one producer (its upstream subtask; two producers on one
// channel could miss a wakeup); producers of different channels and
// PushControl callers may run concurrently; one consumer calls Next.
type Gate struct {
	mu      sync.Mutex
	chans   []gateChannel
	ctrl    []Control
	next    int  // round-robin start, for fairness between channels
	waiting bool // the consumer is (about to be) parked on notify
	notify  chan struct{}
	cap     int

	// consumer is charged as idle while Next waits (busytime.go).
	consumer *taskTimes
}

type gateChannel struct {
	buf     []Event // ring
	head, n int
	blocked bool
	space   chan struct{}
	waiting bool // its producer is parked on space

	// producer is charged as backpressured while Push waits (busytime.go).
	producer *taskTimes
}

// NewGate returns a gate with channels inputs of capacity events each.
func NewGate(channels, capacity int) *Gate {
	g := &Gate{chans: make([]gateChannel, channels), notify: make(chan struct{}, 1), cap: capacity}
	for i := range g.chans {
		g.chans[i].buf = make([]Event, capacity)
		g.chans[i].space = make(chan struct{}, 1)
	}
	return g
}

// NumChannels is the number of input channels.
func (g *Gate) NumChannels() int { return len(g.chans) }

// Push appends ev to channel ch, blocking while the channel is full. It
// returns ErrCanceled if done closes first.
func (g *Gate) Push(ch int, ev Event, done <-chan struct{}) error {
	g.mu.Lock()
	c := &g.chans[ch]
	for c.n == len(c.buf) {
		c.waiting = true
		g.mu.Unlock()
		start := c.producer.begin(waitOutput)
		select {
		case <-c.space:
		case <-done:
			c.producer.end(waitOutput, start, false)
			return ErrCanceled
		}
		c.producer.end(waitOutput, start, false)
		g.mu.Lock()
	}
	c.buf[(c.head+c.n)%len(c.buf)] = ev
	c.n++
	g.wakeConsumer()
	g.mu.Unlock()
	return nil
}

// PushControl queues a control message; it never blocks.
func (g *Gate) PushControl(m Control) {
	g.mu.Lock()
	g.ctrl = append(g.ctrl, m)
	g.wakeConsumer()
	g.mu.Unlock()
}

// wakeConsumer must be called with mu held.
func (g *Gate) wakeConsumer() {
	if g.waiting {
		g.waiting = false
		select {
		case g.notify <- struct{}{}:
		default:
		}
	}
}

// Item is what Next returns: a control message or an event from a channel.
type Item struct {
	Control *Control
	Event   Event
	Channel int
}

// TryNext returns the next item without blocking; ok is false when nothing
// is available on an unblocked channel.
func (g *Gate) TryNext() (it Item, ok bool) {
	g.mu.Lock()
	it, ok = g.take()
	g.mu.Unlock()
	return it, ok
}

// Next returns the next item, blocking until one is available on an
// unblocked channel or a control message arrives. Control messages come
// first; channels are served round-robin.
func (g *Gate) Next(done <-chan struct{}) (Item, error) {
	g.mu.Lock()
	for {
		if it, ok := g.take(); ok {
			g.mu.Unlock()
			return it, nil
		}
		g.waiting = true
		g.mu.Unlock()
		start := g.consumer.begin(waitInput)
		select {
		case <-g.notify:
		case <-done:
			g.consumer.end(waitInput, start, false)
			return Item{}, ErrCanceled
		}
		g.consumer.end(waitInput, start, false)
		g.mu.Lock()
	}
}

// NextBefore is Next that also returns when wake receives (a timer's
// deadline): then ok is false and nothing was taken. A nil wake never
// fires, as in Next.
func (g *Gate) NextBefore(done <-chan struct{}, wake <-chan time.Time) (it Item, ok bool, err error) {
	g.mu.Lock()
	for {
		if it, ok := g.take(); ok {
			g.mu.Unlock()
			return it, true, nil
		}
		g.waiting = true
		g.mu.Unlock()
		start := g.consumer.begin(waitInput)
		select {
		case <-g.notify:
		case <-wake:
			g.consumer.end(waitInput, start, false)
			g.mu.Lock()
			g.waiting = false
			g.mu.Unlock()
			return Item{}, false, nil
		case <-done:
			g.consumer.end(waitInput, start, false)
			return Item{}, false, ErrCanceled
		}
		g.consumer.end(waitInput, start, false)
		g.mu.Lock()
	}
}

// take must be called with mu held.
func (g *Gate) take() (Item, bool) {
	if len(g.ctrl) > 0 {
		m := g.ctrl[0]
		g.ctrl[0] = Control{}
		g.ctrl = g.ctrl[1:]
		return Item{Control: &m}, true
	}
	nc := len(g.chans)
	for i := 0; i < nc; i++ {
		ch := g.next + i
		if ch >= nc {
			ch -= nc
		}
		c := &g.chans[ch]
		if c.n == 0 || c.blocked {
			continue
		}
		ev := c.buf[c.head]
		c.buf[c.head] = Event{}
		c.head = (c.head + 1) % len(c.buf)
		c.n--
		if c.waiting {
			c.waiting = false
			select {
			case c.space <- struct{}{}:
			default:
			}
		}
		g.next = ch + 1
		if g.next == nc {
			g.next = 0
		}
		return Item{Event: ev, Channel: ch}, true
	}
	return Item{}, false
}

// Block stops Next from returning events of channel ch (alignment).
func (g *Gate) Block(ch int) {
	g.mu.Lock()
	g.chans[ch].blocked = true
	g.mu.Unlock()
}

// UnblockAll lets every channel deliver again.
func (g *Gate) UnblockAll() {
	g.mu.Lock()
	for i := range g.chans {
		g.chans[i].blocked = false
	}
	g.wakeConsumer()
	g.mu.Unlock()
}

// Buffered returns the number of events waiting in all channels.
func (g *Gate) Buffered() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for i := range g.chans {
		n += g.chans[i].n
	}
	return n
}
