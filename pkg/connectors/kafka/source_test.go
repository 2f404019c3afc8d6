package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func simpleJob(addr, name, options string) string {
	return fmt.Sprintf(`
name: source
checkpointing: {interval: 30ms}
restartStrategy: {type: none}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, %s}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, addr, options, name)
}

// TestOffsetOutOfRangeOnRestore: the savepoint's offset 100 was deleted
// (log start 150): by default the job fails naming the partition and the
// offsets; earliest and latest skip and count what they skipped.
func TestOffsetOutOfRangeOnRestore(t *testing.T) {
	for _, tc := range []struct {
		policy  string
		want    [2]int64 // idx range emitted after restore
		skipped int64
	}{
		{"", [2]int64{}, 0},
		{"earliest", [2]int64{151, 200}, 50},
		{"latest", [2]int64{201, 210}, 100},
	} {
		t.Run("policy="+tc.policy, func(t *testing.T) {
			b := startBroker(t, "in:1")
			produceIdx(t, b.Addr(), "in", 1, 100)
			first := runtimetest.UniqueName(t)
			j := runtimetest.Start(t, simpleJob(b.Addr(), first, "format: json"), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			runtimetest.WaitCollected(t, waitFor, first, 100)
			path, _, err := j.Stop(t.TempDir(), false)
			require.NoError(t, err)
			runtimetest.Wait(t, j, waitFor)
			require.Equal(t, map[string]int64{"in/0": 100}, snapshotOffsets(t, path, "in"))

			produceIdx(t, b.Addr(), "in", 101, 100)
			require.NoError(t, b.DeleteRecordsBefore("in", 0, 150))
			opts := "format: json"
			if tc.policy != "" {
				opts += ", onOffsetOutOfRange: " + tc.policy
			}
			second := runtimetest.UniqueName(t)
			logs := &syncBuffer{}
			j = startLogged(t, simpleJob(b.Addr(), second, opts), runtimetest.Options{Types: testTypes, Restore: path, CheckpointsDir: t.TempDir()}, logs)
			if tc.policy == "" {
				require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
				msg := j.Info().Error
				for _, s := range []string{"in/0", "offset 100 is out of range", "log start offset 150", "end offset 200", "onOffsetOutOfRange"} {
					assert.Contains(t, msg, s)
				}
				assert.Empty(t, runtimetest.Values(second))
				return
			}
			if tc.policy == "latest" {
				runtimetest.WaitUntil(t, waitFor, "the skip", func() bool { return operator(t, j, "in").Metrics["recordsSkippedOutOfRange"] == tc.skipped })
				produceIdx(t, b.Addr(), "in", 201, 10)
			}
			runtimetest.WaitCollected(t, waitFor, second, int(tc.want[1]-tc.want[0]+1))
			assert.Equal(t, tc.skipped, operator(t, j, "in").Metrics["recordsSkippedOutOfRange"])
			assert.Contains(t, logs.String(), fmt.Sprintf(`"partition":"in/0","offset":100,"log_start_offset":150,"end_offset":200,"new_offset":%d,"records_skipped":%d`, tc.skipped+100, tc.skipped))
			runtimetest.Cancel(t, waitFor, j)
			requireExactly(t, idxs(t, runtimetest.Values(second)), tc.want[0], tc.want[1])
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, policy := range []string{"fail", "skip"} {
		t.Run(policy, func(t *testing.T) {
			b := startBroker(t, "in:1")
			produceTo(t, b.Addr(), "in", 0, `{"idx": 1}`, `not json`, `{"idx": 2}`)
			name := runtimetest.UniqueName(t)
			j := runtimetest.Start(t, simpleJob(b.Addr(), name, "format: json, bounded: latest, onDecodeError: "+policy), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			if policy == "fail" {
				require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
				assert.Contains(t, j.Info().Error, "in/0 offset 1: value is not valid JSON")
				assert.Contains(t, j.Info().Error, `"not json"`)
				return
			}
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
			assert.Equal(t, []string{`{"idx": 1}`, `{"idx": 2}`}, runtimetest.Values(name))
			assert.Equal(t, int64(1), operator(t, j, "in").Metrics["recordsSkipped"])
		})
	}
}

// A number a float64 cannot hold (1e400) is valid JSON syntax that no
// operator can read: the source's onDecodeError sees it, saying what it is,
// instead of an operator downstream failing with "not a JSON object".
func TestNumberOverflowIsADecodeError(t *testing.T) {
	for _, policy := range []string{"fail", "skip"} {
		t.Run(policy, func(t *testing.T) {
			b := startBroker(t, "in:1")
			produceTo(t, b.Addr(), "in", 0, `{"idx": 1}`, `{"idx": 2, "amount": 1e400}`, `{"idx": 3}`)
			name := runtimetest.UniqueName(t)
			j := runtimetest.Start(t, simpleJob(b.Addr(), name, "format: json, bounded: latest, onDecodeError: "+policy), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			if policy == "fail" {
				require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
				assert.Contains(t, j.Info().Error, "in/0 offset 1: value cannot be read as JSON: number 1e400 is out of the range of a 64-bit float")
				return
			}
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
			assert.Equal(t, []string{`{"idx": 1}`, `{"idx": 3}`}, runtimetest.Values(name))
			assert.Equal(t, int64(1), operator(t, j, "in").Metrics["recordsSkipped"])
		})
	}
}

// TestRawFormatKeysAndTimestamps: raw values as they are, Kafka key and
// timestamp on the record.
func TestRawFormatKeysAndTimestamps(t *testing.T) {
	b := startBroker(t, "in:1")
	before := time.Now().UnixMilli()
	produceTo(t, b.Addr(), "in", 0, "k1=not json", "plain")
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: raw
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, bounded: latest}
  - {uid: m, type: map, from: [in], expr: 'key + "|" + value + "|" + string(timestamp >= %d)'}
  - {uid: out, type: test-collect, from: [m], name: %s}
`, b.Addr(), before-1000, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	assert.Equal(t, []string{"k1|not json|true", "|plain|true"}, runtimetest.Values(name))
}

// TestOffsetsCommittedOnCheckpoint: completed checkpoints commit their
// offsets to groupId, where kafka-go's group reader resumes.
func TestOffsetsCommittedOnCheckpoint(t *testing.T) {
	b := startBroker(t, "in:2")
	produceIdx(t, b.Addr(), "in", 1, 100)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, simpleJob(b.Addr(), name, "format: json, groupId: lag"), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, name, 100)
	runtimetest.WaitUntil(t, waitFor, "committed offsets 50/50", func() bool {
		c := committed(t, b.Addr(), "lag", "in", 2)
		return c[0] == 50 && c[1] == 50
	})
	runtimetest.Cancel(t, waitFor, j)

	produceTo(t, b.Addr(), "in", 1, `{"idx": 101}`)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr()}, Topic: "in", GroupID: "lag", MaxWait: 200 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	m, err := r.FetchMessage(ctx)
	require.NoError(t, err)
	assert.Equal(t, `{"idx": 101}`, string(m.Value), "a group member resumes after the committed offsets")
	assert.Equal(t, int64(50), m.Offset)
}

// TestCommitFailureIsOnlyLogged: a failing commit does not fail the job;
// later checkpoints commit.
func TestCommitFailureIsOnlyLogged(t *testing.T) {
	b := startBroker(t, "in:1")
	produceIdx(t, b.Addr(), "in", 1, 10)
	name := runtimetest.UniqueName(t)
	f := fault.Failing(map[string]int{"kafka.commit-offsets": 3})
	j := runtimetest.Start(t, simpleJob(b.Addr(), name, "format: json, groupId: g"), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	runtimetest.WaitUntil(t, waitFor, "a commit", func() bool { return committed(t, b.Addr(), "g", "in", 1)[0] == 10 })
	assert.Equal(t, 3, f.Fired("kafka.commit-offsets"))
	assert.Equal(t, int64(3), operator(t, j, "in").Metrics["offsetCommitFailures"])
	assert.Equal(t, api.StateRunning, j.State())
	assert.Zero(t, j.Info().Restarts)
	runtimetest.Cancel(t, waitFor, j)
}

func TestStartingOffsets(t *testing.T) {
	b := startBroker(t, "in:2")
	produceTo(t, b.Addr(), "in", 0, `{"idx": 1}`, `{"idx": 2}`)
	produceTo(t, b.Addr(), "in", 1, `{"idx": 3}`, `{"idx": 4}`)
	time.Sleep(20 * time.Millisecond)
	mark := time.Now()
	time.Sleep(20 * time.Millisecond)
	produceTo(t, b.Addr(), "in", 0, `{"idx": 5}`)
	produceTo(t, b.Addr(), "in", 1, `{"idx": 6}`)
	for _, g := range []string{"g1", "g2"} { // a job commits its offsets too: one group per case
		_, err := client(t, b.Addr()).OffsetCommit(context.Background(), &kafka.OffsetCommitRequest{
			GroupID: g, GenerationID: -1, Topics: map[string][]kafka.OffsetCommit{"in": {{Partition: 0, Offset: 1}}}})
		require.NoError(t, err)
	}

	for _, tc := range []struct {
		opts string
		want []string
	}{
		{"", []string{"1", "2", "3", "4", "5", "6"}}, // earliest
		{"startingOffsets: earliest", []string{"1", "2", "3", "4", "5", "6"}},
		{"startingOffsets: latest", nil},
		{"startingOffsets: " + mark.UTC().Format(time.RFC3339Nano), []string{"5", "6"}},
		{fmt.Sprintf("startingOffsets: %d", mark.UnixMilli()), []string{"5", "6"}},
		{"startingOffsets: committed, groupId: g1", []string{"2", "5", "3", "4", "6"}},                          // partition 1 has no commit: earliest
		{"startingOffsets: committed, groupId: g2, autoOffsetReset: latest", []string{"2", "5"}},                // partition 1: latest
		{"startingOffsets: committed, groupId: nobody, autoOffsetReset: none", []string{"no committed offset"}}, // fails
	} {
		t.Run(tc.opts, func(t *testing.T) {
			name := runtimetest.UniqueName(t)
			j := runtimetest.Start(t, simpleJob(b.Addr(), name, "bounded: latest, "+tc.opts), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			state := runtimetest.Wait(t, j, waitFor)
			if strings.Contains(tc.opts, "none") {
				require.Equal(t, api.StateFailed, state)
				assert.Contains(t, j.Info().Error, `group "nobody" has no committed offset and autoOffsetReset is none`)
				return
			}
			require.Equal(t, api.StateFinished, state, j.Info().Error)
			var got []string
			for _, v := range runtimetest.Values(name) {
				got = append(got, strings.TrimSuffix(strings.TrimPrefix(v, `{"idx": `), "}"))
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}

// TestPartitionsAddedWhileRunning are read from their earliest offset.
func TestPartitionsAddedWhileRunning(t *testing.T) {
	b := startBroker(t, "in:1")
	produceTo(t, b.Addr(), "in", 0, `{"idx": 1}`)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: discovery
parallelism: 2
checkpointing: {interval: 30ms}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, format: json, partitionDiscoveryInterval: 50ms}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, b.Addr(), name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, name, 1)
	require.NoError(t, b.AddPartitions("in", 3))
	produceTo(t, b.Addr(), "in", 1, `{"idx": 2}`, `{"idx": 3}`)
	produceTo(t, b.Addr(), "in", 2, `{"idx": 4}`)
	runtimetest.WaitCollected(t, waitFor, name, 4)
	runtimetest.WaitUntil(t, waitFor, "3 partitions assigned", func() bool { return operator(t, j, "in").Metrics["assignedPartitions"] == 3 })
	path, _, err := j.Stop(t.TempDir(), false)
	require.NoError(t, err)
	runtimetest.Wait(t, j, waitFor)
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, 4)
	assert.Equal(t, map[string]int64{"in/0": 1, "in/1": 2, "in/2": 1}, snapshotOffsets(t, path, "in"))
}

func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct{ opts, want string }{
		{"topic: in, format: xml", `format: must be one of json, raw, got "xml"`},
		{"topic: in, startingOffsets: yesterday", "startingOffsets: must be earliest, latest, committed"},
		{"topic: in, startingOffsets: committed", "set groupId"},
		{"topic: in, autoOffsetReset: latest", "applies only with startingOffsets: committed"},
		{"topic: in, bounded: forever", "must be latest"},
		{"topic: in, onOffsetOutOfRange: skip", "must be one of earliest, fail, latest"},
		{"topic: in, onDecodeError: skip", "applies only with format: json"},
		{"topics: [a, a]", `topic "a" is listed twice`},
		{"topic: a, topics: [b]", "set either topic or topics"},
		{"groupId: g", "missing topic"},
		{"topic: in, offsets: 3", `unknown field "offsets"`},
	} {
		t.Run(tc.opts, func(t *testing.T) {
			_, err := compileSpec(fmt.Sprintf(`
name: bad
operators:
  - {uid: in, type: kafka, brokers: [localhost:9092], %s}
  - {uid: out, type: test-collect, from: [in], name: x}
`, tc.opts))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := compileSpec(`
name: bad
operators:
  - {uid: in, type: kafka, brokers: [nohost], topic: in}
  - {uid: out, type: kafka, from: [in], brokers: ["localhost:9092"], topic: out, key: "idx +"}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `nohost is not host:port`)
	assert.Contains(t, err.Error(), `cannot compile expression "idx +"`)
	assert.Contains(t, err.Error(), "test.yaml:4:")
}

// brokers is a list, and a plain string (`brokers: 127.0.0.1:9092`, as
// every Kafka tool writes it) or a comma-separated string reads as the
// list it abbreviates; a broker that is no host:port is named with its
// index.
func TestBrokersAsAString(t *testing.T) {
	b := startBroker(t, "in:1", "out:1")
	produceIdx(t, b.Addr(), "in", 1, 10)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: brokers-string
operators:
  - uid: in
    type: kafka
    brokers: %[1]s
    topic: in
    bounded: latest
  - {uid: out, type: kafka, from: [in], brokers: "%[1]s, %[1]s", topic: out}
`, b.Addr()), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	require.Len(t, readTopic(t, b.Addr(), "out"), 10)

	_, err := compileSpec(`
name: bad
operators:
  - {uid: in, type: kafka, brokers: "localhost:9092,nohost", topic: in}
  - {uid: out, type: test-collect, from: [in], name: x}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `operators[0].brokers[1]: nohost is not host:port`)
}
