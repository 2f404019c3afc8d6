package kafka_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// freeAddr returns a loopback address nothing listens on (yet).
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// countingJob reads in and keeps an exactly-once count per key (idx % 5)
// beside the raw (at-least-once) output.
func countingJob(addr, name, sourceOptions string) string {
	return fmt.Sprintf(`
name: faults
parallelism: 2
checkpointing: {interval: 30ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 50ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json, groupId: faults%[3]s}
  - {uid: key, type: keyBy, from: [in], expr: "idx %% 5"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: counts, type: test-collect, from: [cnt], name: %[2]s-counts, parallelism: 1}
  - {uid: raw, type: test-collect, from: [in], name: %[2]s}
`, addr, name, sourceOptions)
}

// requireCountsAndRaw checks the keyed counts add up to n exactly and the
// raw output holds every idx of 1..n (at least once).
func requireCountsAndRaw(t testing.TB, name string, n int) {
	t.Helper()
	final := runtimetest.MaxCounts(t, runtimetest.Values(name+"-counts"))
	require.Equal(t, n, total(final), "counts %v", final)
	seen := map[int64]bool{}
	for _, v := range idxs(t, runtimetest.Values(name)) {
		seen[v] = true
	}
	require.Len(t, seen, n)
}

func waitCounts(t testing.TB, name string, n int) {
	t.Helper()
	runtimetest.WaitUntil(t, waitFor, fmt.Sprintf("counts adding up to %d", n), func() bool {
		return total(runtimetest.MaxCounts(t, runtimetest.Values(name+"-counts"))) >= n
	})
}

// TestBrokerUnreachableAtStart: while no broker listens Open retries
// (connection refused included) for retryTimeout, showing the problem in
// info, and goes on when one appears; with a short retryTimeout it fails
// and the restart strategy retries.
func TestBrokerUnreachableAtStart(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	for _, short := range []bool{false, true} {
		addr := freeAddr(t)
		name := runtimetest.UniqueName(t)
		t.Cleanup(func() { runtimetest.Reset(name + "-counts") })
		opts := ""
		if short {
			opts = ", retryTimeout: 100ms"
		}
		j := runtimetest.Start(t, countingJob(addr, name, opts), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
		if short {
			runtimetest.WaitUntil(t, waitFor, "two restarts", func() bool { return j.Info().Restarts >= 2 })
			assert.Contains(t, j.Info().Error, "kafka source: read metadata of topics [in] from brokers ["+addr+"]")
			assert.Contains(t, j.Info().Error, "(retried for ")
		} else {
			runtimetest.WaitUntil(t, waitFor, "the problem shown", func() bool {
				p := operator(t, j, "in").Problems
				return len(p) == 2 && strings.Contains(p[0], "cannot reach brokers ["+addr+"] to open since")
			})
			assert.Zero(t, j.Info().Restarts)
		}
		b := startBrokerWith(t, kafkabroker.Config{Listen: addr}, "in:3")
		produceIdx(t, b.Addr(), "in", 1, 1000)
		waitCounts(t, name, 1000)
		assert.Empty(t, operator(t, j, "in").Problems)
		runtimetest.Cancel(t, waitFor, j)
		requireCountsAndRaw(t, name, 1000)
	}
}

// runCountingOnData starts a broker on a data dir with 1,000 records in
// topic in (3 partitions) and the job spec(addr, name), and waits until it
// counted them.
func runCountingOnData(t *testing.T, spec func(addr, name string) string) (dir, addr, name string, b *kafkabroker.Broker, j *engine.Job) {
	t.Helper()
	dir = t.TempDir()
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", DataDir: dir,
		Topics: []kafkabroker.Topic{{Name: "in", Partitions: 3}}})
	require.NoError(t, err)
	addr = b.Addr()
	produceIdx(t, addr, "in", 1, 1000)
	name = runtimetest.UniqueName(t)
	t.Cleanup(func() { runtimetest.Reset(name + "-counts") })
	j = runtimetest.Start(t, spec(addr, name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	waitCounts(t, name, 1000)
	return dir, addr, name, b, j
}

// TestBrokerRestartMidRun: the broker goes away and comes back on the same
// address and data; the source reconnects (within retryTimeout) without a
// restart: no loss, no duplicate.
func TestBrokerRestartMidRun(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	dir, addr, name, b, j := runCountingOnData(t, func(a, n string) string { return countingJob(a, n, "") })

	require.NoError(t, b.Close())
	for range 5 {
		runtimetest.WaitCheckpoint(t, waitFor, j) // checkpoints go on while the broker is away
	}
	b = startBrokerWith(t, kafkabroker.Config{Listen: addr, DataDir: dir})
	produceIdx(t, addr, "in", 1001, 1000)
	waitCounts(t, name, 2000)
	runtimetest.WaitCollected(t, waitFor, name, 2000)
	runtimetest.Cancel(t, waitFor, j)
	assert.Zero(t, j.Info().Restarts)
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, 2000)
	requireCountsAndRaw(t, name, 2000)
}

// TestBrokerGoneBeyondRetryTimeout: the source fails the job over after
// retryTimeout; restarts fail until the broker is back; the job then
// resumes from its latest checkpoint: exact counts, no gap.
func TestBrokerGoneBeyondRetryTimeout(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	dir, addr, name, b, j := runCountingOnData(t, func(a, n string) string { return countingJob(a, n, ", retryTimeout: 200ms") })

	require.NoError(t, b.Close())
	runtimetest.WaitUntil(t, waitFor, "a restart", func() bool { return j.Info().Restarts >= 1 })
	b = startBrokerWith(t, kafkabroker.Config{Listen: addr, DataDir: dir})
	produceIdx(t, addr, "in", 1001, 1000)
	waitCounts(t, name, 2000)
	runtimetest.Cancel(t, waitFor, j)
	requireCountsAndRaw(t, name, 2000)
}

// outageJob is countingJob with the restart strategy of the examples
// (few attempts), which an outage longer than retryTimeout used to exhaust
// at once: every restart failed in Open with connection refused.
func outageJob(addr, name string) string {
	return strings.Replace(countingJob(addr, name, ", retryTimeout: 1s"),
		"restartStrategy: {type: fixed-delay, attempts: 1000, delay: 50ms}", "restartStrategy: {type: fixed-delay, attempts: 2, delay: 200ms}", 1)
}

// TestBrokerOutageLongerThanRetryTimeout: the broker is away for three
// times retryTimeout. While it is, info shows that the source cannot
// fetch (a problem per partition, partitionsNotFetching); the job fails
// over after retryTimeout and its restart waits in Open for the broker
// instead of failing at once; when the broker is back the job resumes
// from its latest checkpoint: exact counts, no gap.
func TestBrokerOutageLongerThanRetryTimeout(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	start := time.Now()
	dir, addr, name, b, j := runCountingOnData(t, func(a, n string) string { return outageJob(a, n) })

	require.NoError(t, b.Close())
	down := time.Now()
	runtimetest.WaitUntil(t, waitFor, "the outage shown while RUNNING", func() bool {
		in := operator(t, j, "in")
		return j.State() == api.StateRunning && in.Metrics["partitionsNotFetching"] == 3 && len(in.Problems) == 3 &&
			strings.Contains(in.Problems[0], "cannot fetch since")
	})
	runtimetest.WaitUntil(t, waitFor, "a restart", func() bool { return j.Info().Restarts >= 1 })
	time.Sleep(time.Until(down.Add(3 * time.Second)))
	require.NotEqual(t, api.StateFailed, j.State(), "FAILED during the outage: %s", j.Info().Error)
	b = startBrokerWith(t, kafkabroker.Config{Listen: addr, DataDir: dir})
	produceIdx(t, addr, "in", 1001, 1000)
	waitCounts(t, name, 2000)
	assert.Empty(t, operator(t, j, "in").Problems)
	assert.Zero(t, operator(t, j, "in").Metrics["partitionsNotFetching"])
	runtimetest.Cancel(t, waitFor, j)
	requireCountsAndRaw(t, name, 2000)
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka broker outage longer than retryTimeout",
		Faults: "broker stopped for 3x retryTimeout (restarts: 2) and restarted on its data", Planned: 1, Fired: 1, Cases: 1, Records: 2000})
}

// TestOutageRootCauseKept: when the outage outlasts the restarts, the job
// is FAILED with the last error (a restart's connect) and keeps the root
// cause: the first failure of the streak, the source that could not fetch.
func TestOutageRootCauseKept(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	b := startBroker(t, "in:1")
	addr := b.Addr()
	produceIdx(t, addr, "in", 1, 100)
	name := runtimetest.UniqueName(t)
	t.Cleanup(func() { runtimetest.Reset(name + "-counts") })
	j := runtimetest.Start(t, outageJob(addr, name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	waitCounts(t, name, 100)
	require.NoError(t, b.Close())
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	info := j.Info()
	assert.Contains(t, info.Error, "kafka source: read metadata of topics [in]") // not a fetch: a restart's Open
	assert.Contains(t, info.Error, "(retried for ")
	assert.Contains(t, info.Error, "connection refused")
	assert.Contains(t, info.RootCause, "no successful fetch for", "the first failure of the streak")
	assert.Equal(t, 3, info.Failures, "the fetch failure and two restarts")
	require.NotNil(t, info.RootCauseTime)
	assert.True(t, info.RootCauseTime.Before(*info.ErrorTime))
}

// TestFaultPoints: failures injected at kafka.poll and kafka.snapshot fail
// the job over; it restores exactly.
func TestFaultPoints(t *testing.T) {
	b := startBroker(t, "in:3")
	produceIdx(t, b.Addr(), "in", 1, 3000)
	name := runtimetest.UniqueName(t)
	t.Cleanup(func() { runtimetest.Reset(name + "-counts") })
	f := fault.Failing(map[string]int{"kafka.poll": 1, "kafka.snapshot": 1})
	j := runtimetest.Start(t, countingJob(b.Addr(), name, ", bounded: latest"), runtimetest.Options{Types: testTypes,
		CheckpointsDir: t.TempDir(), Faults: f})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	assert.Equal(t, 1, f.Fired("kafka.poll"))
	assert.Equal(t, 1, f.Fired("kafka.snapshot"))
	assert.GreaterOrEqual(t, j.Info().Restarts, 1)
	requireCountsAndRaw(t, name, 3000)
}
