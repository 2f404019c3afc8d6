package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// txnExitPoints are the fault points a Kafka → Kafka exactly-once job
// passes; the loop makes the daemon exit at each of them in turn.
var txnExitPoints = []string{"task.open", "task.snapshot", "task.notify-complete", "checkpoint.write-state",
	"checkpoint.publish-metadata", "checkpoint.discard", "kafka.poll", "kafka.snapshot", "kafka.commit-offsets",
	"kafka.txn.write", "kafka.txn.precommit", "kafka.txn.commit", "kafka.txn.committed", "kafka.txn.recover"}

func txnChaosPlan() killPlan {
	if os.Getenv("FLINKGO_CHAOS") == "long" {
		return killPlan{kills: 120, records: 150_000, rate: 1_500, reserve: 10_000}
	}
	return killPlan{kills: 24, records: 40_000, rate: 2_000, reserve: 4_000}
}

// verifyTopic runs `flinkgo dev verify --kafka` (the real binary): the
// topic's committed records, read by an independent read_committed reader.
func verifyTopic(t *testing.T, e *env, addr, topic string) verify.Report {
	t.Helper()
	res := e.run("dev", "verify", "--kafka", topic, "--brokers", addr, "-o", "json")
	var r verify.Report
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &r), "dev verify output %q (stderr %q)", res.stdout, res.stderr)
	return r
}

// A kill -9 loop on the real binary with a Kafka → Kafka exactly-once job
// (three brokers, persisted): checkpoints every 150ms, a producer writes a
// known sequence; the daemon is killed at random moments, during startup,
// while a checkpoint is written and right after one is published, and made
// to exit at every fault point the job passes, the sink's transaction
// phases included; the brokers restart on their data a few times while the
// daemon is down. In the end the job is stopped and a read_committed
// reader must find every record exactly once.
func killLoopKafkaToKafkaExactlyOnce(t *testing.T) {
	start := time.Now()
	plan := txnChaosPlan()
	l := newKillLoop(t, 0x74786e, kafkabroker.Config{Nodes: 3,
		Topics: []kafkabroker.Topic{{Name: "seq", Partitions: 4}, {Name: "out", Partitions: 3}}}, txnExitPoints)
	e := l.e
	spec := fmt.Sprintf(`
name: kill-loop-kafka
parallelism: 2
checkpointing: {interval: 150ms, mode: exactly-once}
restartStrategy: {type: fixed-delay, attempts: 100000, delay: 100ms}
operators:
  - {uid: source, type: kafka, brokers: [%[1]s], topic: seq, groupId: kill-loop, startingOffsets: earliest, format: json, isolationLevel: read_committed}
  - {uid: sink, type: kafka, from: [source], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, key: "idx %% 10", deliveryTimeout: 10s}
`, l.addr)
	id := e.mustRun("run", e.writeSpec("kill-loop-kafka.yaml", spec))
	l.watch = checkpointWatch{dir: filepath.Join(e.home, "checkpoints", id)}
	prod := startProducer(l.addr, "seq", plan)

	l.run(plan, prod)
	l.drain(plan, prod)
	var r verify.Report
	done := waitEvery(90*time.Second, checkEvery, func() bool {
		r = verifyTopic(t, e, l.addr, "out")
		return r.Distinct >= plan.records
	})
	info, err := e.jobInfo(id)
	require.NoError(t, err)
	require.Truef(t, done, "job %s (restarts %d, error %q) committed %d of %d records\n%s\n--- last daemon ---\n%s",
		info.State, info.Restarts, info.Error, r.Distinct, plan.records, strings.Join(l.logs, "\n"), e.stderr.String())
	infoText := e.mustRun("info", id)
	require.Contains(t, infoText, "sink transactionalId:", "info shows the transactional ids per subtask")
	stopped := e.mustRun("stop", id, "--savepoint-path", filepath.Join(e.home, "sp"))
	require.DirExists(t, stopped)
	e.waitState(id, api.StateFinished, 30*time.Second)
	requireNoPanic(t, "last daemon log", e.stderr.String())

	r = verifyTopic(t, e, l.addr, "out")
	res := e.run("dev", "verify", "--kafka", "out", "--path", e.home)
	require.Equal(t, 2, res.code, "--kafka and --path together: a usage error (%s)", res.stderr)
	first := e.mustRun("dev", "consume", "--topic", "out", "--brokers", l.addr, "--count", "3")
	require.Len(t, strings.Split(strings.TrimSpace(first), "\n"), 3, "dev consume --count 3: %q", first)
	l.score(start, "kill -9 loop, real binary (Kafka → Kafka, transactions, 3 brokers)", r, plan.records, info.Restarts)
	require.GreaterOrEqual(t, l.kills, 20)
	require.Positive(t, l.modes[killMidWrite]+l.modes[killAfterWrite], "no kill hit a checkpoint")
	require.Positive(t, l.brokerRestarts, "the broker was never restarted")
}
