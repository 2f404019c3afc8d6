package kafka_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/scorecard"
)

// TestExactlyOnceThroughTaskFailures: a Kafka → Kafka job on three brokers
// fails twice in every phase of the sink's two-phase commit; an
// independent read_committed reader finds every record exactly once.
func TestExactlyOnceThroughTaskFailures(t *testing.T) {
	start := time.Now()
	// The points of the sink's life where a task fails: while writing, at
	// the pre-commit, before a commit, after the commits of a checkpoint
	// but before its notification returns (restored transactions are then
	// already committed), before the sink's commits start
	// (task.notify-complete), and during the re-commit of a restore.
	txnPhases := []string{"kafka.txn.write", "kafka.txn.precommit", "kafka.txn.commit", "kafka.txn.committed",
		"task.notify-complete", "kafka.txn.recover"}
	b := startCluster(t, "in:3", "out:3")
	var rules []fault.Rule
	for _, p := range txnPhases {
		rules = append(rules, fault.Rule{Point: p, Action: fault.Error, Nth: 3, Every: 4, Times: 2})
	}
	f := fault.New(nil, rules...)
	spec := strings.Replace(eoJob(b.Addr(), "in", "out", ", key: \"idx % 7\""), ", bounded: latest", "", 1)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	p := startProducer(t, b.Addr(), "in", 5000)
	runtimetest.WaitUntil(t, 2*waitFor, "every fault fired", func() bool {
		planned, fired := f.Planned()
		return planned == fired
	})
	n := p.stop(t)
	runtimetest.WaitUntil(t, waitFor, "every record committed", func() bool { return int64(len(readValues(t, b.Addr(), "out", true))) >= n })
	runtimetest.Cancel(t, waitFor, j)
	got := idxs(t, readValues(t, b.Addr(), "out", true))
	planned, fired := f.Planned()
	lost, dup := lostAndDuplicated(got, 1, n)
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka → Kafka exactly-once, task failures in every sink phase (3 brokers)",
		Faults:  fmt.Sprintf("%d phases x 2 failures (%d restarts)", len(txnPhases), j.Info().Restarts),
		Planned: planned, Fired: fired, Cases: 1, Records: int64(len(got)), Lost: lost, Duplicated: dup})
	for _, p := range txnPhases {
		assert.Equal(t, 2, f.Fired(p), p)
	}
	requireExactly(t, got, 1, n)
	assert.GreaterOrEqual(t, j.Info().Restarts, len(txnPhases))
	assert.Positive(t, operator(t, j, "out").Metrics["transactionsRecommitted"], "restores commit the transactions of their checkpoint")
}

// lostAndDuplicated counts the idx of [from, to] missing from got and the
// extra copies.
func lostAndDuplicated(got []int64, from, to int64) (lost, dup int64) {
	seen := map[int64]int{}
	for _, v := range got {
		seen[v]++
	}
	for i := from; i <= to; i++ {
		switch c := seen[i]; {
		case c == 0:
			lost++
		case c > 1:
			dup += int64(c - 1)
		}
	}
	return lost, dup
}

// TestExactlyOnceThroughBrokerRestart: while the job writes, one broker of
// three stops (its connections drop, its partitions and transaction
// coordinators move to the others) and comes back, twice, and then the
// whole cluster restarts on its data (open transactions survive it); the
// job goes on or fails over; no record is lost or duplicated.
func TestExactlyOnceThroughBrokerRestart(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	start := time.Now()
	dir := t.TempDir()
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Nodes: 3, DataDir: dir,
		Topics: []kafkabroker.Topic{{Name: "in", Partitions: 3}, {Name: "out", Partitions: 3}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	addrs := b.Addrs()
	addr := addrs[0]
	produceIdx(t, addr, "in", 1, 2000)
	spec := fmt.Sprintf(`
name: eo-restart
parallelism: 2
checkpointing: {interval: 50ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 100ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, deliveryTimeout: 3s}
`, addr)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, waitFor, "first records committed", func() bool { return len(readValues(t, addr, "out", true)) > 0 })
	next := int64(2001)
	for _, node := range []int{1, 2} {
		require.NoError(t, b.StopNode(node))
		produceIdx(t, addr, "in", next, 1000)
		next += 1000
		time.Sleep(500 * time.Millisecond)
		require.NoError(t, b.StartNode(node))
	}
	require.NoError(t, b.Close())
	time.Sleep(300 * time.Millisecond)
	b, err = kafkabroker.Start(kafkabroker.Config{Listen: addr, Nodes: 3, NodeListen: addrs[1:], DataDir: dir})
	require.NoError(t, err)
	produceIdx(t, addr, "in", next, 1000)
	n := next + 999
	runtimetest.WaitUntil(t, 2*waitFor, "every record committed", func() bool { return int64(len(readValues(t, addr, "out", true))) >= n })
	runtimetest.Cancel(t, waitFor, j)
	got := idxs(t, readValues(t, addr, "out", true))
	lost, dup := lostAndDuplicated(got, 1, n)
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka → Kafka exactly-once, broker restarts (3 brokers)",
		Faults:  fmt.Sprintf("2 stops and starts of one broker, 1 restart of all three on their data (%d job restarts)", j.Info().Restarts),
		Planned: 3, Fired: 3, Cases: 1, Records: int64(len(got)), Lost: lost, Duplicated: dup})
	requireExactly(t, got, 1, n)
}

// TestExactlyOnceRecoversFromExpiredTransaction: a commit is held up past
// the transaction timeout, so the broker aborts the transaction of a
// completed checkpoint. The sink detects it when the commit fails; the job
// fails over to that checkpoint, whose restore writes the aborted
// records again from the topic and says so: every record exactly once.
func TestExactlyOnceRecoversFromExpiredTransaction(t *testing.T) {
	start := time.Now()
	b := startCluster(t, "in:2", "out:2")
	f := fault.New(nil, fault.Rule{Point: "kafka.txn.commit", Action: fault.Delay, Delay: 2500 * time.Millisecond, Nth: 4})
	spec := fmt.Sprintf(`
name: expiry
checkpointing: {interval: 100ms, timeout: 1s, tolerableFailures: 100}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 20ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, transactionTimeout: 1500ms}
`, b.Addr())
	logs := &syncBuffer{}
	log := zerolog.New(logs)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f, Log: &log})
	p := startProducer(t, b.Addr(), "in", 2000)
	runtimetest.WaitUntil(t, waitFor, "the commit delayed", func() bool { return f.Fired("kafka.txn.commit") == 1 })
	runtimetest.WaitUntil(t, waitFor, "a restart", func() bool { return j.Info().Restarts >= 1 })
	n := p.stop(t)
	runtimetest.WaitUntil(t, waitFor, "every record committed", func() bool { return int64(len(readValues(t, b.Addr(), "out", true))) >= n })
	runtimetest.Cancel(t, waitFor, j)
	got := idxs(t, readValues(t, b.Addr(), "out", true))
	lost, dup := lostAndDuplicated(got, 1, n)
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka → Kafka exactly-once, transaction expired before its commit",
		Faults:  "a commit delayed past transactionTimeout (the broker aborts the transaction); fail-over, the restore writes its records again",
		Planned: 1, Fired: f.Fired("kafka.txn.commit"), Cases: 1, Records: int64(len(got)), Lost: lost, Duplicated: dup})
	requireExactly(t, got, 1, n)
	assert.Positive(t, operator(t, j, "out").Metrics["transactionsRewritten"])
	assert.Contains(t, logs.String(), "kafka transaction aborted by the broker before its commit; writing its records again from the topic")
	assert.NotContains(t, logs.String(), "restoring from the snapshot before it", "the checkpoint naming the transaction is restored, not the one before")
}
