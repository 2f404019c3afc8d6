package nats_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// bookmarkJob reads stream b into a collector (or the sink given).
func bookmarkJob(url, checkpointing, source, sink string) string {
	return fmt.Sprintf(`
name: bookmark
%s
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: nats, url: %s, stream: b, mode: bookmark, format: json%s}
  - {uid: out, from: [in], %s}
`, checkpointing, url, source, sink)
}

// savepointNext reads the bookmark a savepoint holds.
func savepointNext(t *testing.T, path string) int64 {
	t.Helper()
	r, err := engine.LoadRestore(vfs.Default, path)
	require.NoError(t, err)
	for _, op := range r.Meta.Operators {
		if op.UID == "in" {
			require.Len(t, op.Subtasks, 1)
			next, ok := op.Subtasks[0].Details["nextSequence"]
			require.True(t, ok, "details %v", op.Subtasks[0].Details)
			switch v := next.(type) {
			case float64:
				return int64(v)
			case uint64:
				return int64(v)
			case int64:
				return v
			}
			t.Fatalf("nextSequence %T", next)
		}
	}
	t.Fatal("no operator in")
	return 0
}

// TestBookmarkSavepointCancelRestore is the savepoint experiment: while a
// producer writes, savepoint, cancel, restore with -s. The restored job
// starts at exactly the savepoint's next sequence: no gap, no duplicate.
func TestBookmarkSavepointCancelRestore(t *testing.T) {
	srv := startServer(t, "b:b.in")
	first, second := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	dir := t.TempDir()
	const total = 3000
	ctx, stop := context.WithCancel(context.Background())
	produced := make(chan int64, 1)
	go func() {
		sent, _ := natsserver.Produce(ctx, natsserver.ProduceConfig{URL: srv.URL(), Subject: "b.in", Count: total, Rate: 3000})
		produced <- sent
	}()
	defer stop()
	j := runtimetest.Start(t, bookmarkJob(srv.URL(), "checkpointing: {interval: 1h}", "", "type: test-collect, name: "+first),
		runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir})
	runtimetest.WaitCollected(t, waitFor, first, 500)
	path, _, err := j.Savepoint("")
	require.NoError(t, err)
	runtimetest.Cancel(t, waitFor, j)
	next := savepointNext(t, path)
	before := idxs(t, runtimetest.Values(first))

	j = runtimetest.Start(t, bookmarkJob(srv.URL(), "checkpointing: {interval: 1h}", "", "type: test-collect, name: "+second),
		runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir, Restore: path})
	defer runtimetest.Cancel(t, waitFor, j)
	require.Equal(t, int64(total), <-produced)
	runtimetest.WaitUntil(t, waitFor, "the rest", func() bool { return len(runtimetest.Values(second)) >= total-int(next)+1 })
	after := idxs(t, runtimetest.Values(second))
	t.Logf("savepoint at next sequence %d; first job read up to idx %d; restored job read %d..%d", next, before[len(before)-1], after[0], after[len(after)-1])
	requireExactly(t, before[:next-1], 1, next-1)
	require.Equal(t, next, after[0], "the restored job starts at the savepoint's bookmark")
	requireExactly(t, after, next, total)
	require.True(t, sort.SliceIsSorted(after, func(i, k int) bool { return after[i] < after[k] }), "in stream order")
}

// TestBookmarkExactlyOnceIntoFiles: bookmark replay into the file sink,
// through failures and a savepoint → cancel → restore, leaves every
// record exactly once in the finished files.
func TestBookmarkExactlyOnceIntoFiles(t *testing.T) {
	srv := startServer(t, "b:b.in")
	out, dir := t.TempDir(), t.TempDir()
	failName := runtimetest.UniqueName(t)
	spec := func(interval string) string {
		return fmt.Sprintf(`
name: files
checkpointing: {interval: %s}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: nats, url: %s, stream: b, mode: bookmark, format: json}
  - {uid: fail, type: test-fail, from: [in], name: %s, every: 1500, times: 2}
  - {uid: out, type: file, from: [fail], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, interval, srv.URL(), failName, out)
	}
	produceIdx(t, srv.URL(), "b.in", 1, 4000)
	// Failures, recovered from periodic checkpoints; then an atomic stop.
	j := runtimetest.Start(t, spec("50ms"), runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir})
	runtimetest.WaitUntil(t, waitFor, "4000 read", func() bool { return gauge(j, "in", "nextSequence") == 4001 })
	require.Equal(t, int64(2), runtimetest.Fired(failName))
	path, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))
	// Savepoint then cancel, with no periodic checkpoint in between: the
	// savepoint's files are committed by the job restored from it.
	j = runtimetest.Start(t, spec("1h"), runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir, Restore: path})
	produceIdx(t, srv.URL(), "b.in", 4001, 1000)
	runtimetest.WaitUntil(t, waitFor, "5000 read", func() bool { return gauge(j, "in", "nextSequence") == 5001 })
	path, _, err = j.Savepoint("")
	require.NoError(t, err)
	runtimetest.Cancel(t, waitFor, j)
	produceIdx(t, srv.URL(), "b.in", 5001, 1000)
	j = runtimetest.Start(t, spec("1h"), runtimetest.Options{Types: testTypes, CheckpointsDir: dir, SavepointsDir: dir, Restore: path})
	runtimetest.WaitUntil(t, waitFor, "6000 read", func() bool { return gauge(j, "in", "nextSequence") == 6001 })
	_, _, err = j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))

	rep, err := verify.Run(verify.Options{Path: out, Field: "idx"})
	require.NoError(t, err)
	t.Logf("finished files: %d records in %d files, idx %d..%d, %d missing, %d duplicated", rep.Records, rep.Files, rep.First, rep.Last, rep.GapCount, rep.Duplicates)
	require.True(t, rep.OK(), "%+v", rep)
	require.Equal(t, int64(6000), rep.Records)
	require.Equal(t, int64(1), rep.First)
	require.Equal(t, int64(6000), rep.Last)
}

// TestBookmarkStartPositions: epoch, a sequence, a time and now.
func TestBookmarkStartPositions(t *testing.T) {
	srv := startServer(t, "b:b.in")
	produceIdx(t, srv.URL(), "b.in", 1, 10)
	c := connect(t, srv.URL())
	st, err := c.js.Stream(context.Background(), "b")
	require.NoError(t, err)
	m7, err := st.GetMsg(context.Background(), 7)
	require.NoError(t, err)
	for _, tc := range []struct {
		bookmark string
		from     int64
	}{{"", 1}, {", bookmark: 4", 4}, {", bookmark: '" + m7.Time.Format(time.RFC3339Nano) + "'", 7}, {", bookmark: now", 11}} {
		name := runtimetest.UniqueName(t)
		j := runtimetest.Start(t, bookmarkJob(srv.URL(), "checkpointing: {interval: 1h}", tc.bookmark, "type: test-collect, name: "+name),
			runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
		runtimetest.WaitUntil(t, waitFor, "open", func() bool { return gauge(j, "in", "nextSequence") > 0 })
		if tc.from == 11 {
			produceIdx(t, srv.URL(), "b.in", 11, 5)
		}
		end := int64(11)
		if tc.from == 11 {
			end = 16
		}
		runtimetest.WaitUntil(t, waitFor, "read to the end", func() bool { return gauge(j, "in", "nextSequence") == end })
		runtimetest.Cancel(t, waitFor, j)
		got := idxs(t, runtimetest.Values(name))
		require.NotEmpty(t, got, tc.bookmark)
		require.Equal(t, tc.from, got[0], "bookmark%s", tc.bookmark)
		requireExactly(t, got, tc.from, got[len(got)-1])
	}
}

// TestBookmarkDiscardOnEmit: without checkpointing, the position is the
// durable consumer's, moved on emit; a new job resumes after it.
func TestBookmarkDiscardOnEmit(t *testing.T) {
	srv := startServer(t, "b:b.in")
	c := connect(t, srv.URL())
	produceIdx(t, srv.URL(), "b.in", 1, 500)
	first, second := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	spec := func(name string) string {
		return bookmarkJob(srv.URL(), "", ", discardOn: emit, durable: pos", "type: test-collect, name: "+name)
	}
	j := runtimetest.Start(t, spec(first), runtimetest.Options{Types: testTypes})
	runtimetest.WaitCollected(t, waitFor, first, 500)
	runtimetest.Cancel(t, waitFor, j)
	require.Zero(t, c.consumer(t, "b", "pos").NumAckPending, "acknowledged on emit")
	produceIdx(t, srv.URL(), "b.in", 501, 300)
	j = runtimetest.Start(t, spec(second), runtimetest.Options{Types: testTypes})
	defer runtimetest.Cancel(t, waitFor, j)
	runtimetest.WaitCollected(t, waitFor, second, 300)
	requireExactly(t, idxs(t, runtimetest.Values(first)), 1, 500)
	requireExactly(t, idxs(t, runtimetest.Values(second)), 501, 800)
}

// TestBookmarkDecodeErrors: invalid JSON fails the job or is skipped.
func TestBookmarkDecodeErrors(t *testing.T) {
	srv := startServer(t, "b:b.in")
	c := connect(t, srv.URL())
	for _, p := range []string{`{"idx": 1}`, `not json`, `{"idx": 2}`} {
		_, err := c.js.Publish(context.Background(), "b.in", []byte(p))
		require.NoError(t, err)
	}
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, bookmarkJob(srv.URL(), "checkpointing: {interval: 1h}", ", onDecodeError: skip", "type: test-collect, name: "+name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, name, 2)
	require.Equal(t, int64(1), gauge(j, "in", "recordsSkipped"))
	runtimetest.Cancel(t, waitFor, j)
	requireExactly(t, idxs(t, runtimetest.Values(name)), 1, 2)

	j = runtimetest.Start(t, `
name: strict
checkpointing: {interval: 1h}
restartStrategy: {type: none}
operators:
  - {uid: in, type: nats, url: `+srv.URL()+`, stream: b, mode: bookmark, format: json}
  - {uid: out, type: discard, from: [in]}
`, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	require.Contains(t, j.Info().Error, "stream b sequence 2: payload is not valid JSON")
	require.Contains(t, j.Info().Error, "onDecodeError: skip")
}

// TestBookmarkNumberOverflow: a number a float64 cannot hold (1e400) is a
// decode error at the source, named as such, not an operator's failure
// downstream.
func TestBookmarkNumberOverflow(t *testing.T) {
	srv := startServer(t, "b:b.in")
	c := connect(t, srv.URL())
	for _, p := range []string{`{"idx": 1}`, `{"idx": 2, "amount": 1e400}`, `{"idx": 3}`} {
		_, err := c.js.Publish(context.Background(), "b.in", []byte(p))
		require.NoError(t, err)
	}
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, bookmarkJob(srv.URL(), "checkpointing: {interval: 1h}", ", onDecodeError: skip", "type: test-collect, name: "+name),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, name, 2)
	require.Equal(t, int64(1), gauge(j, "in", "recordsSkipped"))
	runtimetest.Cancel(t, waitFor, j)
	require.Equal(t, []string{`{"idx": 1}`, `{"idx": 3}`}, runtimetest.Values(name))

	j = runtimetest.Start(t, `
name: strict
checkpointing: {interval: 1h}
restartStrategy: {type: none}
operators:
  - {uid: in, type: nats, url: `+srv.URL()+`, stream: b, mode: bookmark, format: json}
  - {uid: out, type: discard, from: [in]}
`, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	require.Contains(t, j.Info().Error, "stream b sequence 2: payload cannot be read as JSON: number 1e400 is out of the range of a 64-bit float")
}

// TestSourceMissingStream: a clear error names the stream.
func TestSourceMissingStream(t *testing.T) {
	srv := startServer(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: missing
checkpointing: {interval: 1h}
restartStrategy: {type: none}
operators:
  - {uid: in, type: nats, url: %s, stream: nope, mode: queue, durable: d, queueSemantics: at-least-once}
  - {uid: out, type: discard, from: [in]}
`, srv.URL()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	require.Contains(t, j.Info().Error, `stream "nope" does not exist`)
}

// TestSubjectFilter: both modes read only the subject asked for.
func TestSubjectFilter(t *testing.T) {
	srv := startServer(t, "b:b.>", "q:q.>")
	c := connect(t, srv.URL())
	for i := 1; i <= 20; i++ {
		for _, subj := range []string{"b.even", "q.even"} {
			if i%2 == 1 {
				subj = subj[:2] + "odd"
			}
			_, err := c.js.Publish(context.Background(), subj, []byte(fmt.Sprintf(`{"idx": %d}`, i)))
			require.NoError(t, err)
		}
	}
	books, queue := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: filters
checkpointing: {interval: 50ms}
operators:
  - {uid: b, type: nats, url: %s, stream: b, mode: bookmark, subject: b.even}
  - {uid: q, type: nats, url: %s, stream: q, mode: queue, durable: d, queueSemantics: at-least-once, subject: q.even}
  - {uid: bout, type: test-collect, from: [b], name: %s}
  - {uid: qout, type: test-collect, from: [q], name: %s}
`, srv.URL(), srv.URL(), books, queue), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	runtimetest.WaitCollected(t, waitFor, books, 10)
	runtimetest.WaitCollected(t, waitFor, queue, 10)
	time.Sleep(100 * time.Millisecond)
	for _, name := range []string{books, queue} {
		got := idxs(t, runtimetest.Values(name))
		require.Len(t, got, 10)
		for _, v := range got {
			require.Zero(t, v%2, "only even: %v", got)
		}
	}
	require.Equal(t, "q.even", c.consumer(t, "q", "d").Config.FilterSubject)
}
