package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// TestSinkWritesKeyedRecords: every record arrives; the key expression
// decides the key, and one key always lands in one partition.
func TestSinkWritesKeyedRecords(t *testing.T) {
	b := startBroker(t, "out:3")
	j := runtimetest.Start(t, fmt.Sprintf(`
name: sink
parallelism: 2
operators:
  - {uid: gen, type: datagen, count: 1000}
  - {uid: out, type: kafka, from: [gen], brokers: [%s], topic: out, key: "idx %% 3"}
`, b.Addr()), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	msgs := readTopic(t, b.Addr(), "out")
	var vals []string
	partitionOf := map[string]int{}
	for _, m := range msgs {
		vals = append(vals, string(m.Value))
		idx := idxs(t, []string{string(m.Value)})[0]
		require.Equal(t, fmt.Sprint(idx%3), string(m.Key))
		if p, ok := partitionOf[string(m.Key)]; ok {
			require.Equal(t, p, m.Partition, "key %s", m.Key)
		}
		partitionOf[string(m.Key)] = m.Partition
	}
	requireExactly(t, idxs(t, vals), 1, 1000)
}

// TestSinkKeepsKafkaKeyAndTimestamp: Kafka → Kafka without a key
// expression keeps the record's key and timestamp.
func TestSinkKeepsKafkaKeyAndTimestamp(t *testing.T) {
	b := startBroker(t, "in:1", "out:2")
	produceTo(t, b.Addr(), "in", 0, "a=1", "b=2", "3")
	j := runtimetest.Start(t, fmt.Sprintf(`
name: copy
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, bounded: latest}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out}
`, b.Addr()), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	src := readTopic(t, b.Addr(), "in")
	got := map[string]string{}
	for _, m := range readTopic(t, b.Addr(), "out") {
		got[string(m.Value)] = string(m.Key)
		for _, s := range src {
			if string(s.Value) == string(m.Value) {
				assert.Equal(t, s.Time.UnixMilli(), m.Time.UnixMilli(), "timestamp of %s", m.Value)
				assert.Equal(t, s.Key, m.Key)
			}
		}
	}
	assert.Equal(t, map[string]string{"1": "a", "2": "b", "3": ""}, got)
}

// TestSinkFlushesOnCheckpoint: once a savepoint completes, every record
// emitted before its barrier is in the topic.
func TestSinkFlushesOnCheckpoint(t *testing.T) {
	b := startBroker(t, "out:2")
	j := runtimetest.Start(t, fmt.Sprintf(`
name: flush
checkpointing: {interval: 1h}
operators:
  - {uid: gen, type: datagen, rate: 5000}
  - {uid: out, type: kafka, from: [gen], brokers: [%s], topic: out}
`, b.Addr()), runtimetest.Options{Types: testTypes})
	runtimetest.WaitUntil(t, waitFor, "records written", func() bool { return operator(t, j, "out").RecordsIn > 500 })
	for range 3 {
		path, _, err := j.Savepoint(t.TempDir())
		require.NoError(t, err)
		next := snapshotDetails(t, path, "gen", "nextIndexBySplit")["0"]
		msgs := readTopic(t, b.Addr(), "out")
		vals := make([]string, 0, len(msgs))
		for _, m := range msgs {
			vals = append(vals, string(m.Value))
		}
		var before []int64
		for _, idx := range idxs(t, vals) {
			if idx < next {
				before = append(before, idx)
			}
		}
		requireExactly(t, before, 1, next-1)
	}
	runtimetest.Cancel(t, waitFor, j)
}

// TestSinkWriteFailureFailsCheckpoint: with the broker gone, the flush
// times out after deliveryTimeout and fails the checkpoint and the job.
func TestSinkWriteFailureFailsCheckpoint(t *testing.T) {
	b := startBroker(t, "out:1")
	j := runtimetest.Start(t, fmt.Sprintf(`
name: failing
checkpointing: {interval: 30ms}
restartStrategy: {type: none}
operators:
  - {uid: gen, type: datagen, rate: 5000}
  - {uid: out, type: kafka, from: [gen], brokers: [%s], topic: out, deliveryTimeout: 300ms}
`, b.Addr()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCheckpoint(t, waitFor, j)
	start := time.Now()
	require.NoError(t, b.Close())
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	t.Logf("failed after %s: %s", time.Since(start), j.Info().Error)
	assert.Contains(t, j.Info().Error, `kafka sink: write to topic "out"`)
	assert.GreaterOrEqual(t, j.Checkpoints().Counts.Failed, 1)
}

// TestSinkFlushFaultFailsCheckpoint: a failure injected at kafka.sink.flush
// fails that checkpoint; the job restarts and delivers every record.
func TestSinkFlushFaultFailsCheckpoint(t *testing.T) {
	b := startBroker(t, "out:2")
	f := fault.Failing(map[string]int{"kafka.sink.flush": 1})
	j := runtimetest.Start(t, fmt.Sprintf(`
name: flushfault
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 3, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: 3000, rate: 20000}
  - {uid: out, type: kafka, from: [gen], brokers: [%s], topic: out}
`, b.Addr()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	assert.Equal(t, 1, f.Fired("kafka.sink.flush"))
	assert.Equal(t, 1, j.Info().Restarts)
	seen := map[string]bool{}
	for _, m := range readTopic(t, b.Addr(), "out") {
		seen[string(m.Value)] = true
	}
	assert.Len(t, seen, 3000, "at least once")
}

// TestSinkWithoutGuarantee: deliveryGuarantee none does not wait for the
// writes at barriers (checkpoints complete at once); the records still
// arrive.
func TestSinkWithoutGuarantee(t *testing.T) {
	b := startBroker(t, "out:2")
	f := fault.Failing(map[string]int{"kafka.sink.flush": 1000})
	j := runtimetest.Start(t, fmt.Sprintf(`
name: none
checkpointing: {interval: 20ms}
operators:
  - {uid: gen, type: datagen, count: 2000, rate: 20000}
  - {uid: out, type: kafka, from: [gen], brokers: [%s], topic: out, deliveryGuarantee: none}
`, b.Addr()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	assert.Zero(t, f.Hits("kafka.sink.flush"), "no flush at barriers")
	assert.Positive(t, j.Checkpoints().Counts.Completed)
	assert.Len(t, readTopic(t, b.Addr(), "out"), 2000)
}
