package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

const (
	haFileRecords  = 14_000
	haFileRate     = 1_000
	haKafkaRecords = 14_000
)

// Three daemons (the real binary) on a three-member etcd: one daemon owns
// three running jobs, two datagen → file sink jobs on the shared storage
// and one Kafka → Kafka exactly-once job; it is killed with SIGKILL; the
// other two take the jobs within the lease TTL plus the restore time and
// finish them; the independent checker (flinkgo dev verify, and dev verify
// --kafka) finds every record exactly once.
//
// Sequential (no t.Parallel, outside TestHA): beside the other tests one
// survivor can take all three jobs before the other claims one (seen
// under load: map[2:3]), and the test checks that they share them.
func TestHAFailoverAfterKill(t *testing.T) {
	start := time.Now()
	c := newHACluster(t, 3)
	broker, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0",
		Topics: []kafkabroker.Topic{{Name: "seq", Partitions: 2}, {Name: "out", Partitions: 2}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = broker.Close() })
	c.start(0) // alone: it gets every job
	ids := []string{
		c.daemons[0].mustRun("run", c.daemons[0].writeSpec("a.yaml", fileJob("files-a", c.out("a"), haFileRecords, haFileRate))),
		c.daemons[0].mustRun("run", c.daemons[0].writeSpec("b.yaml", fileJob("files-b", c.out("b"), haFileRecords, haFileRate))),
		c.daemons[0].mustRun("run", c.daemons[0].writeSpec("k.yaml", kafkaJob(broker.Addr()))),
	}
	prod := startProducer(broker.Addr(), "seq", killPlan{records: haKafkaRecords, rate: haFileRate})
	c.start(1)
	c.start(2)
	before := map[string]int64{}
	for _, id := range ids {
		require.Equal(t, 0, c.waitOwned(1, id, -1, 20*time.Second), "every job was submitted while daemon 0 was alone")
		before[id] = c.waitCheckpointAfter(1, id, 1, 20*time.Second)
	}
	list := c.daemons[2].mustRun("list")
	require.Contains(t, list, "OWNER", "list shows which daemon runs each job, under the word of -o json")
	require.Contains(t, list, c.name(0))
	for _, id := range ids {
		if info, _ := c.info(1, id); info != nil {
			before[id] = max(before[id], checkpointID(info))
		}
	}

	killed := time.Now()
	c.daemons[0].killDaemon()
	running, checkpointed := map[string]time.Duration{}, map[string]time.Duration{}
	owners := map[int]int{}
	require.Truef(t, waitFor(30*time.Second, func() bool {
		for _, id := range ids {
			if _, ok := checkpointed[id]; ok {
				continue
			}
			info, err := c.info(1, id)
			if err != nil || info.State != api.StateRunning || info.Owner == c.name(0) || info.Owner == "" {
				continue
			}
			if _, ok := running[id]; !ok {
				running[id] = time.Since(killed)
				owners[c.index(info.Owner)]++
			}
			if checkpointID(info) > before[id] {
				checkpointed[id] = time.Since(killed)
			}
		}
		return len(checkpointed) == len(ids)
	}), "jobs not resumed elsewhere: running %v, checkpointed %v\n%s", running, checkpointed, c.logs())
	require.Len(t, owners, 2, "the two survivors share the three jobs: %v", owners)

	for _, id := range ids[:2] {
		info := waitInfo(t, c, 1, id, api.StateFinished, 60*time.Second)
		require.Equal(t, api.StateFinished, info.State)
	}
	require.True(t, waitFor(60*time.Second, prod.finished), "producer still running")
	require.NoError(t, prod.err)
	var k reportT
	require.True(t, waitEvery(60*time.Second, checkEvery, func() bool {
		k = reportT(verifyTopic(t, c.daemons[1], broker.Addr(), "out"))
		return k.Distinct >= haKafkaRecords
	}), "kafka job committed %d of %d\n%s", k.Distinct, haKafkaRecords, c.logs())
	c.daemons[1].mustRun("stop", ids[2]) // forwarded when daemon 2 owns it
	waitInfo(t, c, 1, ids[2], api.StateFinished, 30*time.Second)
	k = reportT(verifyTopic(t, c.daemons[1], broker.Addr(), "out"))

	var records, lost, dups int64
	for _, name := range []string{"a", "b"} {
		r := c.verifyOut(1, c.out(name))
		records += r.Records
		lost += r.GapCount + max(0, haFileRecords-r.Last) + max(0, r.First-1)
		dups += r.Duplicates
		require.Truef(t, r.OK() && r.Records == haFileRecords && r.First == 1, "output %s: %+v", name, r)
	}
	records += k.Records
	lost += k.GapCount + max(0, haKafkaRecords-k.Last) + max(0, k.First-1)
	dups += k.Duplicates
	require.Truef(t, k.OK() && k.Records == haKafkaRecords && k.First == 1, "kafka output: %+v", k)
	for i := 1; i < 3; i++ {
		requireNoPanic(t, fmt.Sprintf("daemon %d log", i), c.daemons[i].stderr.String())
	}
	toRun, toCheckpoint := median(running), median(checkpointed)
	t.Logf("failover after kill -9 (lease TTL %s): RUNNING elsewhere %v (median %s), first checkpoint after restore %v (median %s); %d records, %d lost, %d duplicated",
		haLeaseTTL, running, toRun, checkpointed, toCheckpoint, records, lost, dups)
	scorecard.Record(t, start, scorecard.Entry{Suite: "HA failover: kill -9 the owner of 3 jobs (3 daemons, 3-member etcd; files + Kafka → Kafka)",
		Faults:  fmt.Sprintf("1 owner killed; jobs RUNNING elsewhere after %s, checkpointing after %s (median, lease TTL %s)", toRun.Round(10*time.Millisecond), toCheckpoint.Round(10*time.Millisecond), haLeaseTTL),
		Planned: 1, Fired: 1, Cases: len(ids), Records: records, Lost: lost, Duplicated: dups})
	require.Less(t, toRun, 10*time.Second, "failover slower than lease TTL + restore, by far")
}

type reportT = verify.Report

func checkpointID(info *api.JobInfo) int64 {
	if info.LatestCheckpoint == nil {
		return 0
	}
	return info.LatestCheckpoint.ID
}

func median(m map[string]time.Duration) time.Duration {
	var ds []time.Duration
	for _, d := range m {
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// waitInfo waits until job id is in state, asking daemon via.
func waitInfo(t *testing.T, c *haCluster, via int, id string, state api.JobState, timeout time.Duration) *api.JobInfo {
	t.Helper()
	var info *api.JobInfo
	require.Truef(t, waitFor(timeout, func() bool {
		var err error
		info, err = c.info(via, id)
		return err == nil && info.State == state
	}), "job %s is not %s after %s: %+v\n%s", id, state, timeout, info, c.logs())
	return info
}
