package kafka_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// bgProducer writes {"idx": 1}, {"idx": 2}, … at a fixed rate until stopped.
type bgProducer struct {
	cancel context.CancelFunc
	done   chan struct{}
	sent   int64
	err    error
}

func startProducer(t testing.TB, addr, topic string, rate float64) *bgProducer {
	ctx, cancel := context.WithCancel(context.Background())
	p := &bgProducer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.sent, p.err = produce.Run(ctx, produce.Config{Brokers: []string{addr}, Topic: topic, Rate: rate})
	}()
	t.Cleanup(p.stopNow)
	return p
}

func (p *bgProducer) stopNow() { p.cancel(); <-p.done }

// stop ends the producer and returns how many records it wrote.
func (p *bgProducer) stop(t testing.TB) int64 {
	t.Helper()
	p.stopNow()
	require.NoError(t, p.err)
	return p.sent
}

// location is where a record landed.
type location struct {
	partition int
	offset    int64
}

// locate maps each idx in topic to its partition and offset.
func locate(t testing.TB, addr, topic string) map[int64]location {
	t.Helper()
	out := map[int64]location{}
	for _, m := range readTopic(t, addr, topic) {
		idx := idxs(t, []string{string(m.Value)})[0]
		out[idx] = location{partition: m.Partition, offset: m.Offset}
	}
	return out
}

// snapshotOffsets reads the offsets a snapshot holds for source uid (as
// savepoint inspect shows them), by "topic/partition".
func snapshotOffsets(t testing.TB, path, uid string) map[string]int64 {
	t.Helper()
	return snapshotDetails(t, path, uid, "offsets")
}

// snapshotDetails reads one map of numbers from the state details of
// operator uid in a snapshot, merged over its subtasks.
func snapshotDetails(t testing.TB, path, uid, key string) map[string]int64 {
	t.Helper()
	r, err := engine.LoadRestore(vfs.Default, path)
	require.NoError(t, err)
	op := r.Meta.Operator(uid)
	require.NotNil(t, op, "no operator %s in %s", uid, path)
	out := map[string]int64{}
	for _, h := range op.Subtasks {
		m, ok := h.Details[key].(map[string]any)
		require.True(t, ok, "subtask %d details %v", h.Subtask, h.Details)
		for k, v := range m {
			out[k] = int64(v.(float64))
		}
	}
	return out
}

func sourceJob(name, addr string, parallelism int, extra string) string {
	return fmt.Sprintf(`
name: restore
parallelism: %d
checkpointing: {interval: 50ms}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, format: json, groupId: restore%s}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, parallelism, addr, extra, name)
}

// TestStopRestoreAcrossParallelism runs the job at parallelism 2, stops it
// with a savepoint, restores at 3, stops, restores at 1, while a producer
// keeps writing: every record arrives exactly once across the three runs.
func TestStopRestoreAcrossParallelism(t *testing.T) {
	b := startBroker(t, "in:4")
	stopRestoreRuns(t, b.Addr(), 3, func(name string, i int) string {
		return sourceJob(name, b.Addr(), []int{2, 3, 1}[i], "")
	})
}

// stopRestoreRuns runs the job of spec(name, i) for i < runs while a
// producer writes into topic in: each run but the last is stopped with a
// savepoint the next restores; every record must arrive exactly once
// across the runs.
func stopRestoreRuns(t *testing.T, addr string, runs int, spec func(name string, i int) string) {
	prod := startProducer(t, addr, "in", 20_000)
	dir := t.TempDir()
	var all []int64
	var restore string
	for i := range runs {
		name := runtimetest.UniqueName(t)
		j := runtimetest.Start(t, spec(name, i), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: restore})
		runtimetest.WaitCollected(t, waitFor, name, 2000)
		if i < runs-1 {
			path, _, err := j.Stop(dir, false)
			require.NoError(t, err)
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))
			offsets := snapshotOffsets(t, path, "in")
			require.Len(t, offsets, 4, "every partition in the savepoint: %v", offsets)
			restore = path
			all = append(all, idxs(t, runtimetest.Values(name))...)
			continue
		}
		sent := prod.stop(t)
		runtimetest.WaitCollected(t, waitFor, name, int(sent)-len(all))
		runtimetest.Cancel(t, waitFor, j)
		all = append(all, idxs(t, runtimetest.Values(name))...)
		requireExactly(t, all, 1, sent)
	}
}

// TestSavepointCancelRestoreStartsAtSavepointOffsets: after savepoint then
// cancel, the first run may have emitted records past the savepoint (a
// non-transactional sink); the restored run starts exactly at the
// savepoint's offsets, and together they miss nothing.
func TestSavepointCancelRestoreStartsAtSavepointOffsets(t *testing.T) {
	b := startBroker(t, "in:4")
	prod := startProducer(t, b.Addr(), "in", 20_000)
	first, second := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	j := runtimetest.Start(t, sourceJob(first, b.Addr(), 2, ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, first, 2000)
	path, _, err := j.Savepoint(t.TempDir())
	require.NoError(t, err)
	runtimetest.WaitCollected(t, waitFor, first, len(runtimetest.Values(first))+1000) // records after the savepoint
	runtimetest.Cancel(t, waitFor, j)
	saved := snapshotOffsets(t, path, "in")
	require.Len(t, saved, 4)

	j = runtimetest.Start(t, sourceJob(second, b.Addr(), 2, ""), runtimetest.Options{Types: testTypes,
		CheckpointsDir: t.TempDir(), Restore: path})
	runtimetest.WaitCollected(t, waitFor, second, 1000)
	sent := prod.stop(t)
	loc := locate(t, b.Addr(), "in")
	require.Len(t, loc, int(sent))
	after := func(idx int64) bool {
		l := loc[idx]
		return l.offset >= saved["in/"+strconv.Itoa(l.partition)]
	}
	var want int
	for idx := range loc {
		if after(idx) {
			want++
		}
	}
	runtimetest.WaitCollected(t, waitFor, second, want)
	runtimetest.Cancel(t, waitFor, j)

	restored := idxs(t, runtimetest.Values(second))
	var wantRestored, before []int64
	for idx := int64(1); idx <= sent; idx++ {
		if after(idx) {
			wantRestored = append(wantRestored, idx)
		}
	}
	for _, idx := range idxs(t, runtimetest.Values(first)) {
		if !after(idx) {
			before = append(before, idx)
		}
	}
	assert.ElementsMatch(t, wantRestored, restored, "the restored run emits exactly the records at or after the savepoint offsets %v", saved)
	// The first run emitted every record before the savepoint, once.
	requireExactly(t, append(before, restored...), 1, sent)
}

// TestTaskFailureRestoresExactly: injected failures restart the job from
// its latest checkpoint; keyed counts (exactly-once state) add up to the
// records produced, and the raw output has no gap.
func TestTaskFailureRestoresExactly(t *testing.T) {
	const n = 20_000
	b := startBroker(t, "in:4")
	produceIdx(t, b.Addr(), "in", 1, n)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: failures
parallelism: 2
checkpointing: {interval: 30ms}
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json}
  - {uid: fail, type: test-fail, from: [in], name: %[2]s, every: 3000, times: 2}
  - {uid: key, type: keyBy, from: [fail], expr: "idx %% 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: counts, type: test-collect, from: [cnt], name: %[2]s-counts, parallelism: 1}
  - {uid: raw, type: test-collect, from: [fail], name: %[2]s}
`, b.Addr(), name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	t.Cleanup(func() { runtimetest.Reset(name + "-counts") })
	runtimetest.WaitUntil(t, waitFor, "exact counts", func() bool { return total(runtimetest.MaxCounts(t, runtimetest.Values(name+"-counts"))) == n })
	runtimetest.Cancel(t, waitFor, j)
	require.Equal(t, int64(2), runtimetest.Fired(name))
	require.GreaterOrEqual(t, j.Info().Restarts, 1)
	final := runtimetest.MaxCounts(t, runtimetest.Values(name+"-counts"))
	require.Equal(t, n, total(final), "counts %v", final)
	raw := idxs(t, runtimetest.Values(name))
	seen := map[int64]bool{}
	for _, v := range raw {
		seen[v] = true
	}
	require.Len(t, seen, n, "at-least-once raw output has no gap")
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
