package daemon

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// bucket is a token bucket: rate tokens a second, at most burst held.
type bucket struct {
	tokens float64
	last   time.Time
}

// take reports whether a request at now may go ahead, and how long until
// one could when it may not.
func (b *bucket) take(now time.Time, rate, burst float64) (bool, time.Duration) {
	if b.last.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / rate * float64(time.Second))
}

// submitLimiter bounds job submissions per client (rest.submit-rate-limit):
// rate a second, bursts of twice that. Idle clients' buckets are dropped,
// so the map holds the clients of the last minute.
type submitLimiter struct {
	rate    float64
	mu      sync.Mutex
	clients map[string]*bucket
	swept   time.Time
}

func newSubmitLimiter(perSecond int) *submitLimiter {
	return &submitLimiter{rate: float64(perSecond), clients: map[string]*bucket{}}
}

// allow reports whether client may submit at now (always, when the limit
// is off), and otherwise how long it should wait.
func (l *submitLimiter) allow(client string, now time.Time) (bool, time.Duration) {
	if l == nil || l.rate <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for c, b := range l.clients {
			if now.Sub(b.last) > time.Minute {
				delete(l.clients, c)
			}
		}
		l.swept = now
	}
	b := l.clients[client]
	if b == nil {
		b = &bucket{}
		l.clients[client] = b
	}
	return b.take(now, l.rate, 2*l.rate)
}

// clientOf names the client of a request for the limiter: its IP address
// over TCP; every client of the unix socket (the daemon's own user) is one.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil || host == "" {
		return "local socket"
	}
	return host
}
