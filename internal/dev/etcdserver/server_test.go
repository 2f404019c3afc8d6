package etcdserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, etcdserver.IgnoredGoroutines()...)
}

// A three-member cluster serves with one member down and again after it
// returns.
func TestThreeMembers(t *testing.T) {
	cl, err := etcdserver.Start(etcdserver.Config{Dir: t.TempDir(), Members: 3})
	require.NoError(t, err)
	defer cl.Close()
	c, err := clientv3.New(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second, Logger: etcdserver.QuietLogger()})
	require.NoError(t, err)
	defer c.Close()
	put := func(k string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Put(ctx, k, "v")
		require.NoError(t, err)
	}
	put("a")
	cl.StopMember(0)
	put("b")
	require.NoError(t, cl.RestartMember(0))
	put("c")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, "", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 3)
}
