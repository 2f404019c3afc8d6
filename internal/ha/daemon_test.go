package ha_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
	"github.com/flinkgo/flinkgo/internal/ha"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

// startDaemon is an HA daemon named name (in-process; its REST address is
// not dialed here: the test calls the daemon).
func startDaemon(t *testing.T, endpoints []string, name string) *daemon.Daemon {
	home := t.TempDir()
	conf := filepath.Join(home, "flinkgo.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf("rest.address: ''\nstate.savepoints.dir: %s\nstate.checkpoints.dir: %s\n",
		filepath.Join(home, "sp"), filepath.Join(home, "chk"))), 0o600))
	cfg, err := config.Load(home, conf, nil)
	require.NoError(t, err)
	node, err := ha.Start(ha.Config{Endpoints: endpoints, ClusterID: "t", LeaseTTL: 2 * time.Second, Name: name, Addr: name,
		Log: zerolog.Nop(), JobRef: daemon.RecordRef})
	require.NoError(t, err)
	d, err := daemon.Start(daemon.Options{Config: cfg, Log: zerolog.Nop(), Registry: all.Registry(), Cluster: node})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = d.Shutdown(ctx)
		node.Close()
	})
	return d
}

// A job's name is one rule across the cluster: two live jobs of one name
// on two daemons are ambiguous on either daemon (before, each daemon
// silently took its own); once one has ended, the name is the other's on
// both daemons.
func TestJobNamesAreTheClustersOnEveryDaemon(t *testing.T) {
	cl, err := etcdserver.Start(etcdserver.Config{Dir: t.TempDir(), Members: 1})
	require.NoError(t, err)
	t.Cleanup(cl.Close) // after the daemons' (cleanups run last first)
	a, b := startDaemon(t, cl.Endpoints(), "a"), startDaemon(t, cl.Endpoints(), "b")
	const spec = "name: dup\noperators:\n  - {uid: gen, type: datagen, rate: 100}\n  - {uid: out, type: discard, from: [gen]}\n"
	ja, err := a.Submit(api.SubmitRequest{Spec: spec})
	require.NoError(t, err)
	jb, err := b.Submit(api.SubmitRequest{Spec: spec})
	require.NoError(t, err)
	for _, d := range []*daemon.Daemon{a, b} {
		require.Eventually(t, func() bool { return len(d.List(true)) == 2 }, 10*time.Second, 20*time.Millisecond, "each daemon sees both jobs")
		_, err := d.Info("dup")
		require.ErrorContains(t, err, `job "dup" is ambiguous`)
		require.ErrorContains(t, err, ja.ID)
		require.ErrorContains(t, err, jb.ID)
	}

	_, err = b.Cancel(jb.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		info, err := a.Info(jb.ID)
		return err == nil && info.State == api.StateCanceled
	}, 10*time.Second, 20*time.Millisecond)
	for _, d := range []*daemon.Daemon{a, b} {
		info, err := d.Info("dup")
		require.NoError(t, err)
		require.Equal(t, ja.ID, info.ID, "the run of the name that has not ended")
		require.Equal(t, "a", info.Owner)
	}
	_, err = b.Logs("dup", api.LogsQuery{})
	require.ErrorContains(t, err, "did not run on this daemon", "b has none of a's job's logs")
	_, err = a.Cancel("dup")
	require.NoError(t, err)
}
