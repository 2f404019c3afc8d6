package ha

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdserver.IgnoredGoroutines()...) }

// host records what a Node asks of its daemon.
type host struct {
	mu       sync.Mutex
	adopted  map[string][]byte
	released map[string]bool
}

func newHost() *host { return &host{adopted: map[string][]byte{}, released: map[string]bool{}} }

func (h *host) Adopt(id string, rec []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.adopted[id] = rec
}

func (h *host) Release(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released[id] = true
}

func (h *host) has(m func(*host) bool) func() bool {
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return m(h)
	}
}

func startNode(t *testing.T, eps []string, name string) *Node {
	n, err := Start(Config{Endpoints: eps, ClusterID: "t", LeaseTTL: 2 * time.Second, Name: name, Addr: name, Log: zerolog.Nop()})
	require.NoError(t, err)
	return n
}

// The owner's writes are guarded by its election: once its lease is gone
// (revoked here, as etcd does when it expires) its record writes fail, its
// jobs' writes are fenced, it releases the job, and the other daemon
// adopts it from the last record the owner wrote.
func TestOwnershipMovesWithTheLease(t *testing.T) {
	cl, err := etcdserver.Start(etcdserver.Config{Dir: t.TempDir(), Members: 1})
	require.NoError(t, err)
	defer cl.Close()
	a, b := startNode(t, cl.Endpoints(), "a"), startNode(t, cl.Endpoints(), "b")
	defer b.Close()
	ha, hb := newHost(), newHost()
	a.Run(ha)
	b.Run(hb)

	rec := json.RawMessage(`{"id":"j1","n":1}`)
	require.NoError(t, a.Save("j1", true, "req-1", rec), "a new job is claimed by its first save")
	guard := a.Guard("j1")
	require.True(t, guard())
	require.Eventually(t, func() bool { return len(b.Jobs()) == 1 && b.Jobs()[0].Owner == "a" }, 5*time.Second, 10*time.Millisecond)
	require.ErrorIs(t, b.Save("j1", true, "", rec), ErrNotOwner, "only the owner writes")
	require.NoError(t, a.Save("j1", true, "req-1", json.RawMessage(`{"id":"j1","n":2}`)))

	// a's lease ends behind its back.
	c, err := clientv3.New(clientv3.Config{Endpoints: cl.Endpoints(), Logger: zap.NewNop()})
	require.NoError(t, err)
	defer c.Close()
	a.mu.Lock()
	lease := a.ep.lease()
	a.mu.Unlock()
	_, err = c.Revoke(context.Background(), lease)
	require.NoError(t, err)
	require.Error(t, a.Save("j1", true, "", json.RawMessage(`{"id":"j1","n":3}`)), "a zombie's record write fails")
	require.Eventually(t, ha.has(func(h *host) bool { return h.released["j1"] }), 5*time.Second, 10*time.Millisecond)
	require.False(t, guard(), "its jobs' writes are fenced")
	require.Eventually(t, hb.has(func(h *host) bool { return h.adopted["j1"] != nil }), 10*time.Second, 10*time.Millisecond)
	hb.mu.Lock()
	require.JSONEq(t, `{"id":"j1","n":2}`, string(hb.adopted["j1"]), "the new owner starts from the last record the owner wrote")
	hb.mu.Unlock()
	require.Eventually(t, func() bool { return len(a.Members()) == 2 }, 10*time.Second, 10*time.Millisecond, "a rejoins with a new session")
	require.Equal(t, "b", a.Jobs()[0].Owner)

	// b ends the job: it resigns, and nobody takes a job that is over.
	require.NoError(t, b.Save("j1", false, "", json.RawMessage(`{"id":"j1","n":4}`)))
	b.Ended("j1")
	require.Eventually(t, func() bool { return a.Jobs()[0].Owner == "" }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	ha.mu.Lock()
	require.Empty(t, ha.adopted, "a finished job is not taken over")
	ha.mu.Unlock()
	a.Close()
}

func TestStartRefusesATakenName(t *testing.T) {
	cl, err := etcdserver.Start(etcdserver.Config{Dir: t.TempDir(), Members: 1})
	require.NoError(t, err)
	defer cl.Close()
	a := startNode(t, cl.Endpoints(), "a")
	defer a.Close()
	_, err = Start(Config{Endpoints: cl.Endpoints(), ClusterID: "t", LeaseTTL: 2 * time.Second, Name: "a", Addr: "a", Log: zerolog.Nop()})
	require.ErrorContains(t, err, `another live daemon of the cluster is named "a"`)
}
