package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/consume"
	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// startCluster starts a 3-node broker (partition leaders and transaction
// coordinators spread over the nodes) with topics "name:partitions".
func startCluster(t testing.TB, topics ...string) *kafkabroker.Broker {
	t.Helper()
	return startBrokerWith(t, kafkabroker.Config{Listen: "127.0.0.1:0", Nodes: 3}, topics...)
}

// readValues reads every record of topic (committed ones only, or all)
// with an independent franz-go consumer.
func readValues(t testing.TB, addr, topic string, committed bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var out []string
	_, err := consume.Kafka(ctx, consume.KafkaConfig{Brokers: []string{addr}, Topic: topic, ReadCommitted: committed},
		func(r consume.Record) error {
			out = append(out, string(r.Value))
			return nil
		})
	require.NoError(t, err)
	return out
}

// markers counts the commit and abort markers in topic.
func markers(t testing.TB, addr, topic string) (commits, aborts int) {
	t.Helper()
	for _, m := range readTopicWithControl(t, addr, topic) {
		switch m {
		case "commit":
			commits++
		case "abort":
			aborts++
		}
	}
	return commits, aborts
}

func eoJob(addr, in, out, extra string) string {
	return fmt.Sprintf(`
name: eo
parallelism: 2
checkpointing: {interval: 40ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 20ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: %[2]s, format: json, bounded: latest}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: %[3]s, deliveryGuarantee: exactly-once%[4]s}
`, addr, in, out, extra)
}

// TestExactlyOnceSinkCopiesEveryRecordOnce: a bounded Kafka → Kafka job on
// three brokers; a read_committed reader sees every idx exactly once, and
// the figures count the commits.
func TestExactlyOnceSinkCopiesEveryRecordOnce(t *testing.T) {
	b := startCluster(t, "in:3", "out:3")
	produceIdx(t, b.Addr(), "in", 1, 5000)
	j := runtimetest.Start(t, eoJob(b.Addr(), "in", "out", ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	requireExactly(t, idxs(t, readValues(t, b.Addr(), "out", true)), 1, 5000)
	m := operator(t, j, "out").Metrics
	commits, aborts := markers(t, b.Addr(), "out")
	assert.Positive(t, m["transactionsCommitted"])
	assert.Zero(t, aborts)
	assert.Zero(t, m["pendingTransactions"])
	// A transaction spans the partitions its records went to: a marker each.
	assert.GreaterOrEqual(t, int64(commits), m["transactionsCommitted"])
	assert.Equal(t, 2, j.Info().Checkpointing.Retained, "the sink keeps the checkpoint before the latest")
}

// TestExactlyOnceSinkNeverCommitsEmptyTransactions: with no input, many
// checkpoints complete and nothing is committed; records then make only
// non-empty transactions.
func TestExactlyOnceSinkNeverCommitsEmptyTransactions(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	b := startCluster(t, "in:1", "out:1")
	spec := strings.Replace(eoJob(b.Addr(), "in", "out", ""), ", bounded: latest", "", 1)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	for range 10 {
		runtimetest.WaitCheckpoint(t, waitFor, j)
	}
	assert.Zero(t, operator(t, j, "out").Metrics["transactionsCommitted"])
	produceIdx(t, b.Addr(), "in", 1, 10)
	runtimetest.WaitUntil(t, waitFor, "10 records committed", func() bool { return len(readValues(t, b.Addr(), "out", true)) == 10 })
	for range 10 {
		runtimetest.WaitCheckpoint(t, waitFor, j)
	}
	runtimetest.Cancel(t, waitFor, j)
	m := operator(t, j, "out").Metrics
	commits, aborts := markers(t, b.Addr(), "out")
	assert.Equal(t, m["transactionsCommitted"], int64(commits), "one marker per committed transaction (one partition)")
	assert.LessOrEqual(t, commits, 10, "at most one transaction per record")
	assert.Zero(t, aborts)
	requireExactly(t, idxs(t, readValues(t, b.Addr(), "out", true)), 1, 10)
}

// TestExactlyOnceSinkRefusesInconsistentTimeouts: the transaction timeout
// is checked against the checkpointing settings and the brokers' maximum
// at submit, naming both settings.
func TestExactlyOnceSinkRefusesInconsistentTimeouts(t *testing.T) {
	for _, tc := range []struct{ checkpointing, options, want string }{
		{"{interval: 1m, timeout: 10m}", "transactionTimeout: 5m",
			"transactionTimeout: 5m0s must exceed checkpointing.interval (1m0s) + checkpointing.timeout (10m0s) = 11m0s"},
		{"{interval: 1s}", "transactionTimeout: 20m",
			"20m0s exceeds transactionMaxTimeout 15m0s (the brokers' transaction.max.timeout.ms"},
		{"{interval: 1s, timeout: 30s}", "transactionTimeout: 20m, transactionMaxTimeout: 30m", ""},
		{"{interval: 1s, mode: at-least-once}", "transactionalIdPrefix: p",
			"exactly-once needs checkpointing.mode: exactly-once"},
		{"{interval: 1s}", "transactionalIdPoolSize: 1", "transactionalIdPoolSize: must be 2 to 1000"},
		{"{interval: 1s}", "transactionalIdPrefix: 'a b'", `transactionalIdPrefix: must be letters, digits`},
	} {
		_, err := compileSpec(fmt.Sprintf(`
name: bad
checkpointing: %s
operators:
  - {uid: in, type: kafka, brokers: [localhost:9092], topic: in}
  - {uid: out, type: kafka, from: [in], brokers: [localhost:9092], topic: out, deliveryGuarantee: exactly-once, %s}
`, tc.checkpointing, tc.options))
		if tc.want == "" {
			assert.NoError(t, err, tc.options)
			continue
		}
		require.Error(t, err, tc.options)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), "test.yaml:6:")
	}
	_, err := compileSpec(`
name: bad
checkpointing: {interval: 1s}
operators:
  - {uid: in, type: kafka, brokers: [localhost:9092], topic: in}
  - {uid: out, type: kafka, from: [in], brokers: [localhost:9092], topic: out, transactionTimeout: 1m}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "transactionTimeout: applies only with deliveryGuarantee: exactly-once")
	_, err = compileSpec(`
name: bad
operators:
  - {uid: in, type: kafka, brokers: [localhost:9092], topic: in}
  - {uid: out, type: kafka, from: [in], brokers: [localhost:9092], topic: out, deliveryGuarantee: exactly-once}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "commits its Kafka transactions when checkpoints complete; enable checkpointing")
}

var _ = time.Second

// TestSinksFailAtOnceOnAMissingTopic: a sink topic that does not exist is
// a configuration error whichever the guarantee: the job fails without
// spending a restart (the exactly-once sink used to restart forever).
func TestSinksFailAtOnceOnAMissingTopic(t *testing.T) {
	b := startBroker(t, "in:1")
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		spec := fmt.Sprintf(`
name: missing
checkpointing: {interval: 100ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 20ms}
operators:
  - {uid: in, type: datagen, rate: 10}
  - {uid: out, type: kafka, from: [in], brokers: [%s], topic: nope, deliveryGuarantee: %s}
`, b.Addr(), guarantee)
		j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
		require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor), guarantee)
		info := j.Info()
		require.Contains(t, info.Error, `topic "nope" does not exist`, guarantee)
		require.Zero(t, info.Restarts, guarantee)
	}
}
