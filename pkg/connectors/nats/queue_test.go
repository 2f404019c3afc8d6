package nats_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// queueJob is a job reading a queue source into a collector, with the
// source options given as flow-mapping entries.
func queueJob(url, checkpointing, source, middle, name string) string {
	spec := fmt.Sprintf(`
name: queue
%s
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: nats, url: %s, stream: q, mode: queue, durable: d, format: json, %s}
`, checkpointing, url, source)
	from := "in"
	if middle != "" {
		spec += "  - {uid: mid, from: [in], " + middle + "}\n"
		from = "mid"
	}
	return spec + fmt.Sprintf("  - {uid: out, type: test-collect, from: [%s], name: %s}\n", from, name)
}

// TestQueueAcksOnlyAfterCoveringCheckpoint samples, while messages flow,
// what the server has seen acknowledged and what the job has checkpointed.
// Every message acknowledged at a sample was emitted before the barrier of
// a checkpoint that had completed before the sample; such a message had
// reached the collecting sink before that checkpoint completed. So acked
// ≤ records collected when that completion was first observed.
func TestQueueAcksOnlyAfterCoveringCheckpoint(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	spy := spyAcks(t, c, "q", "d")
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 150ms}",
		"queueSemantics: at-least-once, ackBatchSize: 50, ackTimeout: 20ms", "", name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	const total = 4000
	c.waitConsumer(t, "q", "d")
	done := make(chan error, 1)
	go func() {
		_, err := natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: srv.URL(), Subject: "q.in", Count: total, Rate: 4000})
		done <- err
	}()
	var lastSeen int64 // latest completed checkpoint observed
	var bound int      // records collected when it was first observed
	samples, ackedSamples, pendingSamples := 0, 0, 0
	for {
		acked := spy.count("+ACK")
		info := c.consumer(t, "q", "d")
		serverAcked := int(info.Delivered.Consumer) - info.NumAckPending
		if cp := j.LatestCheckpoint(); cp != nil && cp.ID > lastSeen {
			lastSeen, bound = cp.ID, len(runtimetest.Values(name))
		}
		samples++
		require.LessOrEqual(t, acked, bound, "sample %d: %d acks seen before any covering checkpoint completed (latest %d)", samples, acked, lastSeen)
		require.LessOrEqual(t, serverAcked, bound, "sample %d: server counts %d acked", samples, serverAcked)
		if acked > 0 {
			ackedSamples++
		}
		if info.NumAckPending > 0 {
			pendingSamples++
		}
		if len(count(idxs(t, runtimetest.Values(name)), 1, total).missing) == 0 && info.NumAckPending == 0 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	require.NoError(t, <-done)
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, total)
	require.Equal(t, total, spy.count("+ACK"))
	require.Zero(t, spy.count("-NAK"))
	require.Equal(t, int64(total), gauge(j, "in", "acksSent"))
	require.Zero(t, gauge(j, "in", "pendingAcks"))
	t.Logf("%d samples (%d with messages pending acknowledgement, %d after acks began); %d checkpoints", samples, pendingSamples, ackedSamples, lastSeen)
	require.Positive(t, pendingSamples, "messages were seen waiting for their checkpoint")
}

// TestQueueSavepointDoesNotAck: an intermediate savepoint never acks (no
// commit); the stop-with-savepoint that follows acks everything, the
// savepoint's messages included.
func TestQueueSavepointDoesNotAck(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	spy := spyAcks(t, c, "q", "d")
	name := runtimetest.UniqueName(t)
	produceIdx(t, srv.URL(), "q.in", 1, 300)
	dir := t.TempDir()
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 1h}", "queueSemantics: at-least-once", "", name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir})
	waitDistinct(t, name, 300)
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, 300, c.consumer(t, "q", "d").NumAckPending)
	require.Equal(t, int64(300), gauge(j, "in", "pendingAcks"))

	_, _, err := j.Savepoint("")
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 300, c.consumer(t, "q", "d").NumAckPending, "a savepoint does not acknowledge")
	require.Zero(t, spy.count("+ACK"))

	produceIdx(t, srv.URL(), "q.in", 301, 200)
	waitDistinct(t, name, 500)
	_, _, err = j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))
	runtimetest.WaitUntil(t, waitFor, "500 acks", func() bool { return spy.count("+ACK") == 500 })
	info := c.consumer(t, "q", "d")
	require.Zero(t, info.NumAckPending)
	require.Zero(t, spy.count("-NAK"))
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, 500)
}

// TestQueueCancelReturnsMessages: a canceled job returns what it did not
// acknowledge; the next job receives it.
func TestQueueCancelReturnsMessages(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	spy := spyAcks(t, c, "q", "d")
	produceIdx(t, srv.URL(), "q.in", 1, 300)
	first, second := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	// A long ackWait, so only the returned messages can explain a quick
	// redelivery.
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 1h}", "queueSemantics: at-least-once, ackWait: 30s", "", first),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	waitDistinct(t, first, 300)
	runtimetest.Cancel(t, waitFor, j)
	runtimetest.WaitUntil(t, waitFor, "300 naks", func() bool { return spy.count("-NAK") == 300 }) // the unacknowledged messages were returned

	began := time.Now()
	j = runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 50ms}", "queueSemantics: at-least-once, ackWait: 30s", "", second),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	waitDistinct(t, second, 300)
	require.Less(t, time.Since(began), 5*time.Second, "redelivered at once, not after ackWait (30s)")
	runtimetest.WaitUntil(t, waitFor, "all acked", func() bool { return c.consumer(t, "q", "d").NumAckPending == 0 })
	requireExactly(t, idxs(t, runtimetest.Values(second)), 1, 300)
}

// TestQueueAbortReturnsMessages: the messages covered by an aborted
// checkpoint are returned to the queue and delivered again, without a
// restart.
func TestQueueAbortReturnsMessages(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	spy := spyAcks(t, c, "q", "d")
	produceIdx(t, srv.URL(), "q.in", 1, 200)
	name := runtimetest.UniqueName(t)
	f := fault.Failing(map[string]int{"checkpoint.publish-metadata": 1})
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 300ms, tolerableFailures: 5}", "queueSemantics: at-least-once", "", name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	defer runtimetest.Cancel(t, waitFor, j)
	runtimetest.WaitUntil(t, waitFor, "an aborted checkpoint", func() bool { return f.Fired("checkpoint.publish-metadata") == 1 })
	runtimetest.WaitCheckpoint(t, waitFor, j)
	runtimetest.WaitUntil(t, waitFor, "all acked", func() bool { return c.consumer(t, "q", "d").NumAckPending == 0 })
	got := idxs(t, runtimetest.Values(name))
	r := count(got, 1, 200)
	naks := gauge(j, "in", "naksSent")
	t.Logf("aborted checkpoint: %d messages returned, %d delivered twice; %s", naks, r.extra, r)
	require.Empty(t, r.missing)
	require.Equal(t, int64(200), naks, "the aborted checkpoint covered every message")
	require.Equal(t, 200, spy.count("-NAK"))
	require.Equal(t, 200, r.extra, "every returned message came back once")
	require.Zero(t, j.Info().Restarts)
}

// atLeastOnceRun runs 5000 messages through source → mid → collect with
// failures and reports what the collector saw. Failures redeliver at most
// the messages unacknowledged at the time, at most maxBacklog.
func atLeastOnceRun(t *testing.T, middle string, f runtime.FaultHook, wantRestarts int) tally {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	const total, backlog = 5000, 500
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 50ms}",
		fmt.Sprintf("queueSemantics: at-least-once, maxBacklog: %d, ackBatchSize: 50, ackTimeout: 10ms", backlog), middle, name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	defer runtimetest.Cancel(t, waitFor, j)
	go func() {
		_, _ = natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: srv.URL(), Subject: "q.in", Count: total, Rate: 10000})
	}()
	waitDistinct(t, name, total)
	runtimetest.WaitUntil(t, waitFor, "all acked", func() bool { return c.consumer(t, "q", "d").NumAckPending == 0 })
	r := count(idxs(t, runtimetest.Values(name)), 1, total)
	restarts := j.Info().Restarts
	t.Logf("%d restarts: %d messages delivered again (bound %d×maxBacklog = %d); %s", restarts, r.extra, restarts, restarts*backlog, r)
	require.Empty(t, r.missing, "no message lost")
	require.Empty(t, r.unexpected)
	require.GreaterOrEqual(t, restarts, wantRestarts)
	require.LessOrEqual(t, r.extra, restarts*backlog, "duplicates are at most the messages in flight (≤ maxBacklog) at each failure")
	return r
}

func TestQueueAtLeastOnceFailuresInProcessing(t *testing.T) {
	name := runtimetest.UniqueName(t)
	atLeastOnceRun(t, fmt.Sprintf("type: test-fail, name: %s, every: 700, times: 3", name), nil, 1)
	require.Equal(t, int64(3), runtimetest.Fired(name))
}

// TestQueueAckFailureAfterCheckpointCompleted fails the acks of completed
// checkpoints (between completion and the acks reaching the server).
func TestQueueAckFailureAfterCheckpointCompleted(t *testing.T) {
	f := fault.Failing(map[string]int{"nats.ack": 3})
	atLeastOnceRun(t, "type: test-pass", f, 1)
	require.Equal(t, 3, f.Fired("nats.ack"))
}

// TestQueueFailureInNotify fails the job in another operator's
// notification of a completed checkpoint, before the source acked it.
func TestQueueFailureInNotify(t *testing.T) {
	name := runtimetest.UniqueName(t)
	atLeastOnceRun(t, fmt.Sprintf("type: test-fail, name: %s, every: 700, times: 3, at: notify", name), nil, 1)
	require.Equal(t, int64(3), runtimetest.Fired(name))
}

// TestQueueFaultsAtPollAndSnapshot: the source's own fault points.
func TestQueueFaultsAtPollAndSnapshot(t *testing.T) {
	f := fault.Failing(map[string]int{"nats.poll": 1, "nats.snapshot": 2})
	atLeastOnceRun(t, "type: test-pass", f, 1)
	require.Equal(t, 1, f.Fired("nats.poll"))
	require.Equal(t, 2, f.Fired("nats.snapshot"))
}

// TestQueueNakFailureFallsBackToAckWait: when returning messages fails,
// the broker redelivers them after ackWait.
func TestQueueNakFailureFallsBackToAckWait(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	spy := spyAcks(t, c, "q", "d")
	produceIdx(t, srv.URL(), "q.in", 1, 100)
	first, second := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	f := fault.Failing(map[string]int{"nats.nak": 1})
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 1h}", "queueSemantics: at-least-once, ackWait: 1s", "", first),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: f})
	waitDistinct(t, first, 100)
	runtimetest.Cancel(t, waitFor, j)
	require.Equal(t, 1, f.Fired("nats.nak"))
	require.Zero(t, spy.count("-NAK"))
	began := time.Now()
	j = runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 50ms}", "queueSemantics: at-least-once, ackWait: 1s", "", second),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	waitDistinct(t, second, 100)
	t.Logf("redelivered after %s (ackWait 1s)", time.Since(began).Round(10*time.Millisecond))
	require.Less(t, time.Since(began), 10*time.Second)
	requireExactly(t, idxs(t, runtimetest.Values(second)), 1, 100)
}

// TestQueueAtMostOnceFailures: acknowledged on emit, nothing comes twice;
// what was emitted and not yet collected at a failure is lost.
func TestQueueAtMostOnceFailures(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	const total = 5000
	name, failName := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	j := runtimetest.Start(t, queueJob(srv.URL(), "", "queueSemantics: at-most-once, maxBacklog: 500, ackBatchSize: 100",
		fmt.Sprintf("type: test-fail, name: %s, every: 700, times: 3", failName), name), runtimetest.Options{Types: testTypes})
	defer runtimetest.Cancel(t, waitFor, j)
	produceIdx(t, srv.URL(), "q.in", 1, total)
	runtimetest.WaitUntil(t, waitFor, "the stream consumed and the failures fired", func() bool {
		info := c.consumer(t, "q", "d")
		return runtimetest.Fired(failName) == 3 && info.NumPending == 0 && info.NumAckPending == 0
	})
	time.Sleep(100 * time.Millisecond)
	r := count(idxs(t, runtimetest.Values(name)), 1, total)
	// In flight at a failure: the records between the source and the
	// collector, at most the failing batch plus the buffered ones.
	const inFlightBound = 10 * runtime.DefaultBatchSize
	t.Logf("3 failures: %d messages lost (bound 3×%d), %d duplicated", len(r.missing), inFlightBound, r.extra)
	require.Empty(t, r.duplicates, "at-most-once: no message twice")
	require.Empty(t, r.unexpected)
	require.LessOrEqual(t, len(r.missing), 3*inFlightBound)
	require.Positive(t, len(r.missing), "the failing batches were lost")
	require.Equal(t, int64(3), runtimetest.Fired(failName))
}

// TestQueueMaxBacklog: the server never has more than maxBacklog messages
// of the consumer unacknowledged, and the source fills it.
func TestQueueMaxBacklog(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	const total, backlog = 600, 50
	produceIdx(t, srv.URL(), "q.in", 1, total)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 50ms}",
		fmt.Sprintf("queueSemantics: at-least-once, maxBacklog: %d, ackBatchSize: 10", backlog), "", name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	c.waitConsumer(t, "q", "d")
	maxServer, maxGauge, full := 0, int64(0), 0
	for len(runtimetest.Values(name)) < total {
		info := c.consumer(t, "q", "d")
		maxServer = max(maxServer, info.NumAckPending)
		maxGauge = max(maxGauge, gauge(j, "in", "pendingAcks"))
		if info.NumAckPending == backlog {
			full++
		}
		time.Sleep(time.Millisecond)
	}
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, total)
	t.Logf("maxBacklog %d: server NumAckPending max %d (at the bound in %d samples), pendingAcks gauge max %d", backlog, maxServer, full, maxGauge)
	require.LessOrEqual(t, maxServer, backlog)
	require.LessOrEqual(t, maxGauge, int64(backlog))
	require.Positive(t, full, "the backlog filled up (the bound was what limited the source)")
	require.Equal(t, backlog, c.consumer(t, "q", "d").Config.MaxAckPending)
}

// TestQueueAckBatches: due acks leave in full batches of ackBatchSize at
// once, the rest as a partial batch ackTimeout later.
func TestQueueAckBatches(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	spy := spyAcks(t, c, "q", "d")
	produceIdx(t, srv.URL(), "q.in", 1, 250)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 1s}",
		"queueSemantics: at-least-once, ackBatchSize: 100, ackTimeout: 1500ms", "", name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	waitDistinct(t, name, 250)
	require.Nil(t, j.LatestCheckpoint(), "the first checkpoint comes after the messages")
	runtimetest.WaitCheckpoint(t, waitFor, j)
	completed := time.Now()
	runtimetest.WaitUntil(t, waitFor, "the full batches", func() bool { return spy.count("+ACK") >= 200 })
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 200, spy.count("+ACK"), "two full batches, the partial one waits")
	require.Equal(t, 50, c.consumer(t, "q", "d").NumAckPending)
	runtimetest.WaitUntil(t, waitFor, "the partial batch", func() bool { return spy.count("+ACK") == 250 })
	times := spy.ackTimes()
	full := times[199].Sub(times[0])
	gap := times[200].Sub(times[199])
	t.Logf("full batches sent within %s of each other, %s after completion was seen; partial batch %s later", full, times[0].Sub(completed), gap)
	require.Less(t, full, 200*time.Millisecond)
	require.Greater(t, gap, 1*time.Second, "the partial batch waited about ackTimeout")
	require.Less(t, gap, 2500*time.Millisecond)
	// The spy sees an ack on its way to the server, which counts it a
	// moment later (on a loaded machine, not yet at the next request).
	runtimetest.WaitUntil(t, waitFor, "no ack pending", func() bool { return c.consumer(t, "q", "d").NumAckPending == 0 })
}

// TestQueueParallelSubtasksShareTheConsumer: two subtasks share one
// durable; every message arrives once.
func TestQueueParallelSubtasksShareTheConsumer(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	const total = 3000
	name := runtimetest.UniqueName(t)
	var seen sync.Map
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 50ms}", "queueSemantics: at-least-once, parallelism: 2", "", name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: hookFunc(func(point string, attrs ...any) error {
			if point == "nats.poll" {
				seen.Store(attrs[1], true)
			}
			return nil
		})})
	defer runtimetest.Cancel(t, waitFor, j)
	produceIdx(t, srv.URL(), "q.in", 1, total)
	waitDistinct(t, name, total)
	runtimetest.WaitUntil(t, waitFor, "all acked", func() bool { return c.consumer(t, "q", "d").NumAckPending == 0 })
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, total)
	for _, sub := range []int{0, 1} {
		_, ok := seen.Load(sub)
		require.True(t, ok, "subtask %d polled", sub)
	}
}

type hookFunc func(point string, attrs ...any) error

func (h hookFunc) Fire(point string, attrs ...any) error { return h(point, attrs...) }

// TestQueueKeepaliveBeatsAckWait: messages waiting far longer than
// ackWait (in the inbox behind a slow sink, then for a checkpoint) are
// kept alive with in-progress acks: the broker redelivers none of them.
func TestQueueKeepaliveBeatsAckWait(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	spy := spyAcks(t, c, "q", "d")
	const total = 2000
	produceIdx(t, srv.URL(), "q.in", 1, total)
	name := runtimetest.UniqueName(t)
	dir := t.TempDir()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: slow
checkpointing: {interval: 1h}
operators:
  - {uid: in, type: nats, url: %s, stream: q, mode: queue, durable: d, format: json, queueSemantics: at-least-once, ackWait: 1s}
  - {uid: out, type: test-collect, from: [in], name: %s, delay: 300ms}
`, srv.URL(), name), runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir})
	runtimetest.WaitCollected(t, waitFor, name, total)
	time.Sleep(1500 * time.Millisecond) // and waiting for a checkpoint
	info := c.consumer(t, "q", "d")
	t.Logf("after %s: %d delivered, %d pending, %d redelivered; %d in-progress acks sent",
		time.Since(info.Created).Round(100*time.Millisecond), info.Delivered.Consumer, info.NumAckPending, info.NumRedelivered, spy.count("+WPI"))
	require.Equal(t, uint64(total), info.Delivered.Consumer, "nothing delivered twice")
	require.Zero(t, info.NumRedelivered)
	require.Equal(t, total, info.NumAckPending)
	require.Positive(t, spy.count("+WPI"))
	_, _, err := j.Stop("", false)
	require.NoError(t, err)
	runtimetest.Wait(t, j, waitFor)
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, total)
	require.Zero(t, c.consumer(t, "q", "d").NumAckPending)
}

// TestQueueSkippedMessagesAreAcked: a message skipped by onDecodeError:
// skip is acknowledged with the others (it does not sit in the backlog).
func TestQueueSkippedMessagesAreAcked(t *testing.T) {
	srv := startServer(t, "q:q.in")
	c := connect(t, srv.URL())
	for _, p := range []string{`{"idx": 1}`, `not json`, `{"idx": 2}`} {
		_, err := c.js.Publish(context.Background(), "q.in", []byte(p))
		require.NoError(t, err)
	}
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, queueJob(srv.URL(), "checkpointing: {interval: 50ms}", "queueSemantics: at-least-once, onDecodeError: skip", "", name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	runtimetest.WaitCollected(t, waitFor, name, 2)
	runtimetest.WaitUntil(t, waitFor, "all acked", func() bool { return c.consumer(t, "q", "d").NumAckPending == 0 && gauge(j, "in", "acksSent") == 3 })
	require.Equal(t, int64(1), gauge(j, "in", "recordsSkipped"))
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, 2)
}
