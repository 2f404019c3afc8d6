package ha

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
)

// The zombie's late answer: the owner sends a record write (a checkpoint's
// restore point) just before it freezes; etcd applies it while the lease
// is alive — the guard holds, the write is legitimately the owner's — and
// the owner reads the answer only after its lease expired and another
// daemon took the job. Save must not report success then: the daemon
// would complete the checkpoint (log it, count it, tell its sinks to
// commit) as a zombie. The record stands (the new owner starts from it).
func TestSaveAnsweredAfterTheClaimWasLostFails(t *testing.T) {
	cl, err := etcdserver.Start(etcdserver.Config{Dir: t.TempDir(), Members: 1})
	require.NoError(t, err)
	defer cl.Close()
	hold := newReplyHold(t, cl.Endpoints()[0])
	defer hold.Close()
	a, b := startNode(t, []string{hold.Endpoint()}, "a"), startNode(t, cl.Endpoints(), "b")
	defer b.Close()
	ha, hb := newHost(), newHost()
	a.Run(ha)
	b.Run(hb)
	require.NoError(t, a.Save("j1", true, "", json.RawMessage(`{"id":"j1","n":1}`)))
	require.Eventually(t, func() bool { return len(b.Jobs()) == 1 && b.Jobs()[0].Owner == "a" }, 5*time.Second, 10*time.Millisecond)

	c, err := clientv3.New(clientv3.Config{Endpoints: cl.Endpoints(), Logger: zap.NewNop()})
	require.NoError(t, err)
	defer c.Close()
	a.mu.Lock()
	ep := a.ep
	a.mu.Unlock()

	// a freezes: from now on it hears nothing from etcd. It sends the
	// record just before its deadline, so that its epoch ends while the
	// answer is held, well within the write's own timeout (one TTL).
	hold.Hold()
	require.Eventually(t, func() bool {
		ep.mu.Lock()
		defer ep.mu.Unlock()
		return time.Until(ep.deadline) < 300*time.Millisecond
	}, 5*time.Second, time.Millisecond)
	saved := make(chan error, 1)
	go func() { saved <- a.Save("j1", true, "", json.RawMessage(`{"id":"j1","n":2}`)) }()
	require.Eventually(t, func() bool {
		resp, err := c.Get(context.Background(), a.keys.job("j1"))
		return err == nil && len(resp.Kvs) == 1 && jobRecordN(t, resp.Kvs[0].Value) == 2
	}, 5*time.Second, time.Millisecond, "etcd applied the write while a's lease was alive")
	select {
	case <-ep.Done(): // its deadline passed unrenewed
	case <-time.After(5 * time.Second):
		t.Fatal("a's epoch did not end at its deadline")
	}
	_, err = c.Revoke(context.Background(), ep.lease()) // then its lease expires
	require.NoError(t, err)

	hold.Release() // a wakes and reads the answer
	err = <-saved
	require.ErrorIs(t, err, ErrClaimLostInFlight, "a write answered after the claim was lost is not a success")
	require.Eventually(t, hb.has(func(h *host) bool { return h.adopted["j1"] != nil }), 10*time.Second, 10*time.Millisecond)
	hb.mu.Lock()
	require.JSONEq(t, `{"id":"j1","n":2}`, string(hb.adopted["j1"]), "the write stands: the new owner starts from it")
	hb.mu.Unlock()
	require.Eventually(t, ha.has(func(h *host) bool { return h.released["j1"] }), 10*time.Second, 10*time.Millisecond)
	a.Close()
}

func jobRecordN(t *testing.T, v []byte) int {
	var j Job
	require.NoError(t, json.Unmarshal(v, &j))
	var r struct{ N int }
	require.NoError(t, json.Unmarshal(j.Record, &r))
	return r.N
}
