package nats

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// delivery is a message as delivered, with the keepalive generation it
// was delivered in (see acker).
type delivery struct {
	msg jetstream.Msg
	gen int64
}

// inbox hands messages from the client's delivery goroutine to Poll. It
// holds at most limit messages: a full inbox blocks the delivery, which
// stops the client from pulling more (backpressure). close unblocks it for
// good: later messages are still kept (to be returned to the queue) but
// never block.
type inbox struct {
	mu     sync.Mutex
	msgs   []delivery
	limit  int
	closed bool
	ready  chan struct{} // signalled when the inbox becomes non-empty
	space  chan struct{} // signalled when Poll took messages
	quit   chan struct{} // closed by close
}

func newInbox(limit int) *inbox {
	return &inbox{limit: limit, ready: make(chan struct{}, 1), space: make(chan struct{}, 1), quit: make(chan struct{})}
}

// put adds m, waiting while the inbox is full (unless closed).
func (in *inbox) put(m delivery) {
	in.mu.Lock()
	for len(in.msgs) >= in.limit && !in.closed {
		in.mu.Unlock()
		select {
		case <-in.space:
		case <-in.quit:
		}
		in.mu.Lock()
	}
	in.msgs = append(in.msgs, m)
	first := len(in.msgs) == 1
	in.mu.Unlock()
	if first {
		signal(in.ready)
	}
}

// take appends up to max messages to dst. When the inbox is empty it waits
// up to wait for one, or until wake fires, and returns none: messages that
// came during a wait are left for the next Poll, so the Poll that waited
// returns empty-handed and its wait counts as idle, not busy
// (runtime.Source.Poll).
func (in *inbox) take(dst []delivery, max int, wait *time.Timer, wake <-chan struct{}) []delivery {
	if dst, ok := in.takeNow(dst, max); ok {
		return dst
	}
	select {
	case <-in.ready: // the next take finds the messages without waiting
	case <-wake:
	case <-wait.C:
	}
	return dst
}

func (in *inbox) takeNow(dst []delivery, max int) ([]delivery, bool) {
	in.mu.Lock()
	n := min(max, len(in.msgs))
	if n == 0 {
		in.mu.Unlock()
		return dst, false
	}
	dst = append(dst, in.msgs[:n]...)
	rest := copy(in.msgs, in.msgs[n:])
	clear(in.msgs[rest:])
	in.msgs = in.msgs[:rest]
	in.mu.Unlock()
	signal(in.space)
	return dst, true
}

// appendOld appends to dst the reply subjects of the messages held that
// were delivered in generation gen or before (keepalives).
func (in *inbox) appendOld(dst []string, gen int64) []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, m := range in.msgs {
		if m.gen > gen {
			break // delivered in order: the rest is younger
		}
		dst = append(dst, m.msg.Reply())
	}
	return dst
}

// close stops blocking deliveries and returns the reply subjects of the
// messages left (to be returned to the queue). Messages put after close
// are returned by the next drain.
func (in *inbox) close() []string {
	in.mu.Lock()
	if !in.closed {
		in.closed = true
		close(in.quit)
	}
	in.mu.Unlock()
	return in.drain()
}

// drain removes every message and returns their reply subjects.
func (in *inbox) drain() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]string, len(in.msgs))
	for i, m := range in.msgs {
		out[i] = m.msg.Reply()
	}
	clear(in.msgs)
	in.msgs = in.msgs[:0]
	return out
}

// signal wakes a waiter on ch without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
