package ha

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// epoch is one etcd session of a daemon: a lease, kept alive, and the
// elections won on it. It knows until when the lease is certainly alive:
// the send time of the last answered keep-alive plus the TTL it granted,
// less a margin for clock drift. etcd expires a lease no earlier than TTL
// after it received the keep-alive, which is after it was sent, so while
// Valid holds no other daemon can have won this one's elections. Once the
// deadline passes or etcd says the lease is gone, the epoch is over for
// good: the daemon starts a new one.
type epoch struct {
	client  *clientv3.Client
	session *concurrency.Session
	ttl     time.Duration

	mu       sync.Mutex
	deadline time.Time
	over     bool
	done     chan struct{} // closed when over
	stop     context.CancelFunc
	wg       sync.WaitGroup
}

// margin is taken off each deadline: clock rate differences between this
// machine and etcd's, and scheduling delay after the check.
func margin(ttl time.Duration) time.Duration { return ttl/10 + 50*time.Millisecond }

func newEpoch(ctx context.Context, c *clientv3.Client, ttl time.Duration) (*epoch, error) {
	sent := time.Now()
	lease, err := c.Grant(ctx, int64((ttl+time.Second-1)/time.Second))
	if err != nil {
		return nil, err
	}
	granted := time.Duration(lease.TTL) * time.Second
	e := &epoch{client: c, ttl: granted, deadline: sent.Add(granted - margin(granted)), done: make(chan struct{})}
	e.session, err = concurrency.NewSession(c, concurrency.WithLease(lease.ID))
	if err != nil {
		_, _ = c.Revoke(context.Background(), lease.ID)
		return nil, err
	}
	kctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	e.wg.Add(1)
	go e.keepAlive(kctx)
	return e, nil
}

func (e *epoch) lease() clientv3.LeaseID { return e.session.Lease() }

// Valid reports whether the lease is certainly alive now.
func (e *epoch) Valid() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.over && time.Now().Before(e.deadline)
}

// Done is closed when the epoch is over.
func (e *epoch) Done() <-chan struct{} { return e.done }

func (e *epoch) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.over {
		e.over = true
		close(e.done)
	}
}

// keepAlive renews the lease every third of its TTL and moves the
// deadline; it ends the epoch when the deadline passes unrenewed or etcd
// no longer knows the lease. (The session keeps the lease alive too; this
// loop is the one that measures.)
func (e *epoch) keepAlive(ctx context.Context) {
	defer e.wg.Done()
	tick := time.NewTicker(e.ttl / 3)
	defer tick.Stop()
	for {
		e.mu.Lock()
		left := time.Until(e.deadline)
		e.mu.Unlock()
		if left <= 0 {
			e.end()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-e.session.Done():
			e.end()
			return
		case <-time.After(left):
			continue // the deadline: ends the epoch above unless renewed meanwhile
		case <-tick.C:
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, e.ttl/3)
		resp, err := e.client.KeepAliveOnce(rctx, e.lease())
		cancel()
		switch {
		case errors.Is(err, context.Canceled) && ctx.Err() != nil:
			return
		case err != nil:
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				e.end()
				return
			}
		case resp.TTL > 0:
			granted := time.Duration(resp.TTL) * time.Second
			e.mu.Lock()
			if d := sent.Add(granted - margin(granted)); d.After(e.deadline) {
				e.deadline = d
			}
			e.mu.Unlock()
		}
	}
}

// close ends the epoch; revoke also deletes the lease at once, and with it
// the member key and every election won on it (a clean shutdown), instead
// of leaving them to expire.
func (e *epoch) close(revoke bool) {
	e.end()
	e.stop()
	e.wg.Wait()
	if revoke {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = e.client.Revoke(ctx, e.lease())
		cancel()
	}
	e.session.Orphan() // stop its keep-alive without revoking
}
