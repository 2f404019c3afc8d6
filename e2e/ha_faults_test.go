package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// A zombie: the owner of two jobs (files, Kafka → Kafka exactly-once) is
// frozen with SIGSTOP past its lease; the other daemon takes the jobs;
// then the owner wakes (SIGCONT) with its jobs' tasks in the middle of
// their work. It must publish no checkpoint and commit nothing, and stop
// its copies; the output holds every record exactly once.
func haZombieOwnerCommitsNothing(t *testing.T) {
	start := time.Now()
	c := newHACluster(t, 2)
	broker, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0",
		Topics: []kafkabroker.Topic{{Name: "seq", Partitions: 2}, {Name: "out", Partitions: 2}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = broker.Close() })
	c.start(0)
	ids := []string{
		c.daemons[0].mustRun("run", c.daemons[0].writeSpec("a.yaml", fileJob("files", c.out("a"), haFileRecords, haFileRate))),
		c.daemons[0].mustRun("run", c.daemons[0].writeSpec("k.yaml", kafkaJob(broker.Addr()))),
	}
	prod := startProducer(broker.Addr(), "seq", killPlan{records: haKafkaRecords, rate: haFileRate})
	c.start(1)
	for _, id := range ids {
		c.waitCheckpointAfter(1, id, 1, 20*time.Second)
	}

	zombie := c.daemons[0].daemon.Process
	require.NoError(t, zombie.Signal(syscall.SIGSTOP))
	stopped := time.Now()
	after := map[string]int64{}
	for _, id := range ids {
		require.Equal(t, 1, c.waitOwned(1, id, 0, 20*time.Second))
		after[id] = c.waitCheckpointAfter(1, id, 0, 20*time.Second)
	}
	time.Sleep(time.Second) // the new owner writes on while the zombie sleeps
	woken := len(c.daemons[0].stderr.String())
	require.NoError(t, zombie.Signal(syscall.SIGCONT))
	t.Logf("zombie frozen for %s", time.Since(stopped).Round(time.Millisecond))
	require.Truef(t, waitFor(20*time.Second, func() bool {
		return strings.Contains(c.daemons[0].stderr.String()[woken:], "etcd session lost")
	}), "the zombie did not notice it lost its session:\n%s", c.logs())
	time.Sleep(2 * time.Second) // what it would do next, it does now
	zlog := zombieEpoch(c.daemons[0].stderr.String()[woken:])
	require.Emptyf(t, lateCompletions(t, c, ids, zlog), "the zombie completed a checkpoint after waking:\n%s", zlog)
	list := c.daemons[0].mustRun("list", "-o", "json")
	for _, id := range ids {
		require.Contains(t, list, id)
		// The woken daemon forwards to the owner once it has a session
		// again (on a loaded machine the new one can take seconds).
		var info *api.JobInfo
		require.Truef(t, waitFor(20*time.Second, func() bool {
			var err error
			info, err = c.info(0, id)
			return err == nil && info.Owner == c.name(1)
		}), "the zombie lists the job under its new owner: %+v", info)
		require.Greater(t, checkpointID(info), after[id]-1)
	}
	local := c.daemons[0].run("info", ids[0])
	require.Equal(t, 0, local.code)

	waitInfo(t, c, 1, ids[0], api.StateFinished, 60*time.Second)
	require.True(t, waitFor(60*time.Second, prod.finished), "producer still running")
	var k verify.Report
	require.True(t, waitEvery(60*time.Second, checkEvery, func() bool {
		k = verifyTopic(t, c.daemons[1], broker.Addr(), "out")
		return k.Distinct >= haKafkaRecords
	}), "kafka job committed %d of %d\n%s", k.Distinct, haKafkaRecords, c.logs())
	c.daemons[0].mustRun("stop", ids[1])
	waitInfo(t, c, 1, ids[1], api.StateFinished, 30*time.Second)
	k = verifyTopic(t, c.daemons[1], broker.Addr(), "out")
	r := c.verifyOut(1, c.out("a"))
	zlog = zombieEpoch(c.daemons[0].stderr.String()[woken:])
	require.Emptyf(t, lateCompletions(t, c, ids, zlog), "the zombie completed a checkpoint after waking:\n%s", zlog)
	requireNoPanic(t, "zombie log", c.daemons[0].stderr.String())
	requireNoPanic(t, "new owner log", c.daemons[1].stderr.String())
	lost := r.GapCount + max(0, haFileRecords-r.Last) + k.GapCount + max(0, haKafkaRecords-k.Last)
	scorecard.Record(t, start, scorecard.Entry{Suite: "HA zombie: owner frozen (SIGSTOP) past its lease, then woken (files + Kafka → Kafka)",
		Faults:  "1 owner frozen and woken; it published 0 checkpoints and committed nothing after waking",
		Planned: 1, Fired: 1, Cases: len(ids), Records: r.Records + k.Records, Lost: lost, Duplicated: r.Duplicates + k.Duplicates})
	require.Truef(t, r.OK() && r.Records == haFileRecords && r.First == 1, "file output: %+v", r)
	require.Truef(t, k.OK() && k.Records == haKafkaRecords && k.First == 1, "kafka output: %+v", k)
}

// zombieEpoch is the part of a woken daemon's log written before it
// joined the cluster again. After that it is a fresh member: on a loaded
// machine the other daemon may lose its own lease meanwhile, and then the
// woken one rightly takes the jobs over under its new lease and
// checkpoints them.
func zombieEpoch(log string) string {
	if i := strings.Index(log, `"message":"joined the HA cluster"`); i >= 0 {
		if j := strings.LastIndexByte(log[:i], '\n'); j >= 0 {
			return log[:j+1]
		}
		return ""
	}
	return log
}

// lateCompletions are the checkpoints the woken zombie logged as completed
// that were not its own to complete. One is: a checkpoint whose record
// write etcd applied and answered before the freeze (the lease alive, the
// claim held) is the owner's, and only its log line and the sinks' commit
// call (refused by the fence and the broker) come after waking. The new
// owner then restores from exactly that checkpoint, which tells it from a
// zombie's act.
func lateCompletions(t *testing.T, c *haCluster, ids []string, zlog string) []string {
	restored := map[string]string{}
	for _, id := range ids {
		if info, err := c.info(1, id); err == nil {
			restored[id] = info.RestoredFrom
		}
	}
	var late []string
	for _, line := range logLinesWith(t, zlog, "checkpoint completed") {
		var l struct{ Job, Path string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Path != "" && restored[l.Job] == l.Path {
			continue
		}
		late = append(late, line)
	}
	return late
}

// logLinesWith are the lines of a daemon's JSON log whose message is msg.
// Every line after waking counts: a checkpoint whose record write etcd
// answered only after the lease was lost must not complete
// (ha.ErrClaimLostInFlight), whenever it was triggered.
func logLinesWith(t *testing.T, log, msg string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var l struct{ Message string }
		if json.Unmarshal([]byte(line), &l) != nil {
			continue // a line torn at the wake-up offset, or not JSON
		}
		if l.Message == msg {
			out = append(out, line)
		}
	}
	return out
}

func kafkaJob(brokers string) string {
	return fmt.Sprintf(`
name: kafka-eo
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 200ms}
operators:
  - {uid: source, type: kafka, brokers: [%[1]s], topic: seq, groupId: ha, startingOffsets: earliest, format: json, isolationLevel: read_committed}
  - {uid: sink, type: kafka, from: [source], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, deliveryTimeout: 10s}
`, brokers)
}

// etcd members lost: one of three is tolerated (checkpoints go on); with
// two of three gone (no quorum) no checkpoint completes and no output is
// committed; when they return, the job resumes and finishes with every
// record exactly once.
func haEtcdMembersLost(t *testing.T) {
	start := time.Now()
	c := newHACluster(t, 2)
	c.start(0)
	c.start(1)
	id := c.daemons[0].mustRun("run", c.daemons[0].writeSpec("a.yaml", fileJob("files", c.out("a"), 20_000, haFileRate)))
	cp := c.waitCheckpointAfter(0, id, 1, 20*time.Second)

	c.etcd.StopMember(0)
	cp = c.waitCheckpointAfter(0, id, cp+3, 15*time.Second) // one member down: checkpoints go on
	t.Logf("one etcd member down: checkpoints went on to %d", cp)

	c.etcd.StopMember(1)
	lostAt := time.Now()
	time.Sleep(time.Second) // a checkpoint already recorded may still commit
	committed := finishedRecords(c.out("a"))
	time.Sleep(2 * haLeaseTTL)
	require.Equal(t, committed, finishedRecords(c.out("a")), "output was committed without an etcd quorum")
	require.Truef(t, strings.Contains(c.daemons[0].stderr.String()+c.daemons[1].stderr.String(), "etcd session lost"),
		"without a quorum the owner's session ends and it stops the job\n%s", c.logs())
	t.Logf("quorum lost for %s: %d records committed before, none after", time.Since(lostAt).Round(time.Millisecond), committed)

	require.NoError(t, c.etcd.RestartMembers(0, 1))
	back := time.Now()
	require.Truef(t, waitEvery(30*time.Second, checkEvery, func() bool { return finishedRecords(c.out("a")) > committed }),
		"no output committed after quorum returned\n%s", c.logs())
	t.Logf("quorum back: output committed again after %s", time.Since(back).Round(time.Millisecond))
	waitInfo(t, c, 1, id, api.StateFinished, 60*time.Second)
	r := c.verifyOut(1, c.out("a"))
	for i := range c.daemons {
		requireNoPanic(t, fmt.Sprintf("daemon %d log", i), c.daemons[i].stderr.String())
	}
	scorecard.Record(t, start, scorecard.Entry{Suite: "HA: etcd members lost (1 of 3 tolerated; quorum lost and back)",
		Faults:  "1 member stopped (checkpoints went on), then a 2nd (no commit without quorum), both restarted (job resumed)",
		Planned: 2, Fired: 2, Cases: 2, Records: r.Records, Lost: r.GapCount + max(0, 20_000-r.Last), Duplicated: r.Duplicates})
	require.Truef(t, r.OK() && r.Records == 20_000 && r.First == 1, "output: %+v", r)
}
