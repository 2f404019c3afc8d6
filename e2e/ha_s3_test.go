package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/s3test"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

const (
	haS3Records = 6_000
	haS3Rate    = 1_000
)

// HA mode with its storage in a bucket of a real S3 server (versitygw on
// loopback): high-availability.storageDir is s3://…, so every daemon's
// checkpoints go there, and the job's file sink writes to the bucket too.
// Two daemons on an embedded etcd; the owner is killed with SIGKILL while
// it has checkpointed and committed output; the other takes the job from
// the checkpoint recorded in etcd (read from the bucket) and finishes it.
// The output, read back with an independent S3 client, holds every record
// exactly once, no multipart upload is left open, and no daemon wrote a
// checkpoint to its local home.
func haFailoverOnS3(t *testing.T) {
	start := time.Now()
	srv := s3test.Start(t)
	bucket := s3test.Bucket(t, srv)
	c := newHAClusterOn(t, 2, 1, "s3://"+bucket+"/ha", srv.Env())
	s := &s3Env{env: c.daemons[1], srv: srv, bucket: bucket, raw: rawS3(t, srv)}
	out := "s3://" + bucket + "/ha/out/a"

	c.start(0) // alone: it gets the job
	id := c.daemons[0].mustRun("run", c.daemons[0].writeSpec("a.yaml", fileJob("files-s3", out, haS3Records, haS3Rate)))
	c.start(1)
	require.Equal(t, 0, c.waitOwned(1, id, -1, 20*time.Second))
	before := c.waitCheckpointAfter(1, id, 1, 20*time.Second)
	require.NotEmpty(t, s.keys("ha/e2e/checkpoints/"+id), "checkpoints are in the bucket, under storageDir/cluster-id")
	s.waitRecords("ha/out/a", 1) // output committed before the crash

	killed := time.Now()
	c.daemons[0].killDaemon()
	require.Equal(t, 1, c.waitOwned(1, id, 0, 20*time.Second))
	toRun := time.Since(killed)
	c.waitCheckpointAfter(1, id, before, 20*time.Second)
	toCheckpoint := time.Since(killed)
	info := waitInfo(t, c, 1, id, api.StateFinished, 30*time.Second)
	require.NotNil(t, info.Storage, "the job's object storage requests are counted on the new owner")

	r := s.verifyOutput("ha/out/a")
	lost := r.GapCount + max(0, haS3Records-r.Last) + max(0, r.First-1)
	require.Truef(t, r.OK() && r.Records == haS3Records && r.First == 1 && lost == 0, "output: %+v\n%s", r, c.logs())
	require.Zero(t, s.uploads("ha/out/a"), "the killed owner's in-progress uploads are aborted or completed by the new owner")
	for i, e := range c.daemons {
		_, err := os.Stat(filepath.Join(e.home, "checkpoints"))
		require.Truef(t, os.IsNotExist(err), "daemon %d wrote checkpoints to its home", i)
	}
	requireNoPanic(t, "daemon 1 log", c.daemons[1].stderr.String())
	require.NotContains(t, c.daemons[1].stderr.String(), "on object storage (objects cannot be renamed", "the fenced job FS publishes the object store's way")
	t.Logf("failover on S3 after kill -9 (lease TTL %s): RUNNING elsewhere after %s, first checkpoint after restore %s; %d records, %d lost, %d duplicated",
		haLeaseTTL, toRun.Round(10*time.Millisecond), toCheckpoint.Round(10*time.Millisecond), r.Records, lost, r.Duplicates)
	scorecard.Record(t, start, scorecard.Entry{Suite: "HA failover on S3: kill -9 the owner (2 daemons, etcd; storageDir, checkpoints and file sink in a versitygw bucket)",
		Faults:  fmt.Sprintf("1 owner killed; RUNNING elsewhere after %s, checkpointing after %s (lease TTL %s)", toRun.Round(10*time.Millisecond), toCheckpoint.Round(10*time.Millisecond), haLeaseTTL),
		Planned: 1, Fired: 1, Cases: 1, Records: r.Records, Lost: lost, Duplicated: r.Duplicates})
}
