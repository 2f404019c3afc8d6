package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// haLeaseTTL is the daemons' lease in the HA tests: the failover figure
// the issue names is for 2s.
const haLeaseTTL = 2 * time.Second

// haCluster is an embedded three-member etcd on loopback, a shared
// storage directory, and real daemons (the binary) in HA mode, each in
// its own FLINKGO_HOME.
type haCluster struct {
	t       *testing.T
	etcd    *etcdserver.Cluster
	storage string   // high-availability.storageDir: a local directory or s3://…
	extra   []string // environment of every daemon (the S3 server's)
	daemons []*env
	ports   []int
}

func newHACluster(t *testing.T, daemons int) *haCluster {
	return newHAClusterOn(t, daemons, 3, t.TempDir(), nil)
}

// newHAClusterOn is newHACluster with members etcd members and the shared
// storage at storage, the daemons run with extra in their environment.
func newHAClusterOn(t *testing.T, daemons, members int, storage string, extra []string) *haCluster {
	etcd, err := etcdserver.Start(etcdserver.Config{Dir: t.TempDir(), Members: members})
	require.NoError(t, err)
	t.Cleanup(etcd.Close)
	c := &haCluster{t: t, etcd: etcd, storage: storage, extra: extra}
	for range daemons {
		c.add()
	}
	return c
}

// add configures one more daemon (not started).
func (c *haCluster) add() *env {
	e := newEnv(c.t)
	e.extra = append(e.extra, c.extra...)
	port := freePort(c.t)
	cfg := fmt.Sprintf(`high-availability:
  type: etcd
  etcd: {endpoints: "%s", lease-ttl: %ds}
  storageDir: %s
  cluster-id: e2e
`, strings.Join(c.etcd.Endpoints(), ","), int(haLeaseTTL/time.Second), c.storage)
	require.NoError(c.t, os.WriteFile(filepath.Join(e.home, "flinkgo.yaml"), []byte(cfg), 0o600))
	c.daemons = append(c.daemons, e)
	c.ports = append(c.ports, port)
	return e
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// name is daemon i's name in the cluster (its REST address).
func (c *haCluster) name(i int) string { return fmt.Sprintf("127.0.0.1:%d", c.ports[i]) }

func (c *haCluster) start(i int) {
	c.daemons[i].startDaemon("--rest-address", c.name(i))
}

// index is the daemon named name (-1 when none).
func (c *haCluster) index(name string) int {
	for i := range c.daemons {
		if c.name(i) == name {
			return i
		}
	}
	return -1
}

// out is a file sink directory on the shared storage.
func (c *haCluster) out(name string) string { return filepath.Join(c.storage, "out", name) }

// info asks daemon via about a job (any daemon answers for any job).
func (c *haCluster) info(via int, id string) (*api.JobInfo, error) { return c.daemons[via].jobInfo(id) }

// waitOwned waits until job id runs on a daemon other than not (-1: any)
// and returns that daemon's index.
func (c *haCluster) waitOwned(via int, id string, not int, timeout time.Duration) int {
	c.t.Helper()
	var info *api.JobInfo
	owner := -1
	ok := waitFor(timeout, func() bool {
		var err error
		info, err = c.info(via, id)
		if err != nil || info.State != api.StateRunning {
			return false
		}
		owner = c.index(info.Owner)
		return owner >= 0 && owner != not
	})
	require.Truef(c.t, ok, "job %s not running elsewhere than daemon %d in %s: %+v\n%s", id, not, timeout, info, c.logs())
	return owner
}

// waitCheckpointAfter waits until job id completed a checkpoint newer
// than after and returns that checkpoint's id.
func (c *haCluster) waitCheckpointAfter(via int, id string, after int64, timeout time.Duration) int64 {
	c.t.Helper()
	var got int64
	require.Truef(c.t, waitFor(timeout, func() bool {
		info, err := c.info(via, id)
		if err != nil || info.LatestCheckpoint == nil {
			return false
		}
		got = info.LatestCheckpoint.ID
		return got > after
	}), "job %s completed no checkpoint after %d in %s\n%s", id, after, timeout, c.logs())
	return got
}

func (c *haCluster) logs() string {
	var b strings.Builder
	for i, e := range c.daemons {
		if e.stderr != nil {
			fmt.Fprintf(&b, "--- daemon %d (%s) ---\n%s\n", i, c.name(i), tail(e.stderr.String(), 6000))
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// verifyOut runs the independent checker (`flinkgo dev verify`, the real
// binary) over a file sink's finished output.
func (c *haCluster) verifyOut(via int, dir string) verify.Report {
	c.t.Helper()
	return verifyPath(c.t, c.daemons[via], dir)
}

// finishedRecords counts the committed (finished) records under dir.
func finishedRecords(dir string) int64 {
	r, err := verify.Run(verify.Options{Path: dir, Field: "idx"})
	if err != nil {
		return 0
	}
	return r.Records
}

func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// verifyPath runs `flinkgo dev verify --path dir -o json`.
func verifyPath(t *testing.T, e *env, dir string) verify.Report {
	t.Helper()
	res := e.run("dev", "verify", "--path", dir, "-o", "json")
	var r verify.Report
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &r), "dev verify output %q (stderr %q)", res.stdout, res.stderr)
	return r
}

// fileJob is a bounded datagen → file sink job on the shared storage.
func fileJob(name, out string, records int, rate int) string {
	return fmt.Sprintf(`
name: %s
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 200ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: %d}
  - {uid: files, type: file, from: [gen], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, name, records, rate, out)
}
