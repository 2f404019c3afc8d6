package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// txnProducer writes transactions to partition 0 of a topic.
type txnProducer struct {
	t  testing.TB
	cl *kgo.Client
}

func newTxnProducer(t testing.TB, addr, topic, id string) *txnProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return &txnProducer{t: t, cl: cl}
}

// write opens a transaction with values; end commits (true) or aborts it,
// or leaves it open (nil).
func (p *txnProducer) write(end *bool, values ...string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(p.t, p.cl.BeginTransaction())
	for _, v := range values {
		require.NoError(p.t, p.cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr())
	}
	if end != nil {
		require.NoError(p.t, p.cl.EndTransaction(ctx, kgo.TransactionEndTry(*end)))
	}
}

func (p *txnProducer) commit() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(p.t, p.cl.EndTransaction(ctx, kgo.TryCommit))
}

var commit, abort = ptr(true), ptr(false)

func ptr[T any](v T) *T { return &v }

func isolationJob(addr, topic, name, isolation, extra string) string {
	return fmt.Sprintf(`
name: isolation
checkpointing: {interval: 50ms}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: %s, isolationLevel: %s%s}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, addr, topic, isolation, extra, name)
}

// TestReadCommittedSkipsAbortedAndWaitsAtLastStableOffset: a partition
// holds plain records, a committed, an aborted and an open transaction,
// and a plain record after the open one. The read_committed source emits
// the committed records in order, never the aborted ones, and nothing past
// the open transaction until it commits; the default read_uncommitted
// source (kafka-go) emits everything, aborted records included.
func TestReadCommittedSkipsAbortedAndWaitsAtLastStableOffset(t *testing.T) {
	b := startCluster(t, "mixed:1")
	produceTo(t, b.Addr(), "mixed", 0, "p1", "p2")
	newTxnProducer(t, b.Addr(), "mixed", "committed").write(commit, "c1", "c2", "c3")
	newTxnProducer(t, b.Addr(), "mixed", "aborted").write(abort, "x1", "x2")
	open := newTxnProducer(t, b.Addr(), "mixed", "open")
	open.write(nil, "o1", "o2")
	produceTo(t, b.Addr(), "mixed", 0, "p3")

	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, isolationJob(b.Addr(), "mixed", name, "read_committed", ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, name, 5)
	for range 5 {
		runtimetest.WaitCheckpoint(t, waitFor, j) // time for anything beyond the last stable offset to leak
	}
	assert.Equal(t, []string{"p1", "p2", "c1", "c2", "c3"}, runtimetest.Values(name), "stops at the open transaction")
	open.commit()
	runtimetest.WaitCollected(t, waitFor, name, 8)
	newTxnProducer(t, b.Addr(), "mixed", "aborted").write(abort, "x3")
	produceTo(t, b.Addr(), "mixed", 0, "p4")
	runtimetest.WaitCollected(t, waitFor, name, 9)
	runtimetest.Cancel(t, waitFor, j)
	assert.Equal(t, []string{"p1", "p2", "c1", "c2", "c3", "o1", "o2", "p3", "p4"}, runtimetest.Values(name))

	uncommitted := runtimetest.UniqueName(t)
	j = runtimetest.Start(t, isolationJob(b.Addr(), "mixed", uncommitted, "read_uncommitted", ", bounded: latest"), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	assert.Contains(t, runtimetest.Values(uncommitted), "x1", "read_uncommitted reads aborted records")
}

// TestReadCommittedBoundedStopsAtLastStableOffset: a bounded read_committed
// source ends at the last stable offsets of its start, past the control
// records below them.
func TestReadCommittedBoundedStopsAtLastStableOffset(t *testing.T) {
	b := startCluster(t, "mixed:1")
	p := newTxnProducer(t, b.Addr(), "mixed", "t")
	p.write(commit, "c1", "c2")
	p.write(abort, "x1")
	p.write(commit, "c3")
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, isolationJob(b.Addr(), "mixed", name, "read_committed", ", bounded: latest"), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	assert.Equal(t, []string{"c1", "c2", "c3"}, runtimetest.Values(name))
}

// TestSavepointsRestoreAcrossIsolationLevels: a savepoint of the kafka-go
// reader restores with the franz-go reader and the other way round (one
// state format): every record exactly once across three runs at
// different parallelisms.
func TestSavepointsRestoreAcrossIsolationLevels(t *testing.T) {
	b := startCluster(t, "in:4")
	isolation := []string{"read_uncommitted", "read_committed", "read_uncommitted"}
	stopRestoreRuns(t, b.Addr(), 3, func(name string, i int) string {
		return fmt.Sprintf(`
name: cross
parallelism: %d
checkpointing: {interval: 50ms}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, format: json, isolationLevel: %s}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, []int{2, 3, 1}[i], b.Addr(), isolation[i], name)
	})
}

// TestReadCommittedFailsAfterRetryTimeout: with the brokers gone, the
// franz-go reader shows a problem and partitionsNotFetching, then fails the
// job over after retryTimeout, as the kafka-go fetchers do.
func TestReadCommittedFailsAfterRetryTimeout(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	b := startCluster(t, "in:1")
	produceIdx(t, b.Addr(), "in", 1, 10)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: gone
checkpointing: {interval: 50ms}
restartStrategy: {type: none}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, isolationLevel: read_committed, retryTimeout: 3s}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, b.Addr(), name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, name, 10)
	require.NoError(t, b.Close())
	start := time.Now()
	runtimetest.WaitUntil(t, waitFor, "a problem while the brokers are gone", func() bool {
		for _, op := range j.Info().Operators {
			if op.UID == "in" && len(op.Problems) > 0 {
				return op.Metrics["partitionsNotFetching"] == 1 && strings.Contains(op.Problems[0], "cannot fetch")
			}
		}
		return false
	})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	t.Logf("failed after %s: %s", time.Since(start), j.Info().Error)
	assert.Contains(t, j.Info().Error, "retryTimeout")
}
