package nats_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// TestSinkDeduplicatesReplaysAfterFailures: bookmark replay → failures →
// nats. The replayed records get the message ids they had before the
// failure and the output stream drops them: each record stored once.
func TestSinkDeduplicatesReplaysAfterFailures(t *testing.T) {
	srv := startServer(t, "b:b.in", "out:out.>")
	c := connect(t, srv.URL())
	failName := runtimetest.UniqueName(t)
	const total = 4000
	produceIdx(t, srv.URL(), "b.in", 1, total)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: copy
checkpointing: {interval: 50ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: in, type: nats, url: %s, stream: b, mode: bookmark, format: json}
  - {uid: fail, type: test-fail, from: [in], name: %s, every: 1300, times: 2}
  - {uid: out, type: nats, from: [fail], url: %s, subject: out.copy}
`, srv.URL(), failName, srv.URL()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), SavepointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, waitFor, "the failures and every record in", func() bool {
		return runtimetest.Fired(failName) == 2 && gauge(j, "in", "nextSequence") == total+1
	})
	_, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))
	info, err := c.js.Stream(context.Background(), "out")
	require.NoError(t, err)
	si, err := info.Info(context.Background())
	require.NoError(t, err)
	published := j.Info().Operators[2].RecordsIn
	t.Logf("2 failures: the sink received %d records, the stream stored %d", published, si.State.Msgs)
	require.Greater(t, published, int64(total), "records were replayed to the sink")
	got := idxs(t, c.streamMsgs(t, "out"))
	requireExactly(t, got, 1, total)
	for i := range got {
		require.Equal(t, int64(i+1), got[i], "in order")
	}
}

// TestSinkSubjectExpression routes records by an expression.
func TestSinkSubjectExpression(t *testing.T) {
	srv := startServer(t, "out:out.>")
	c := connect(t, srv.URL())
	j := runtimetest.Start(t, fmt.Sprintf(`
name: route
checkpointing: {interval: 1h}
operators:
  - {uid: in, type: datagen, count: 100}
  - {uid: out, type: nats, from: [in], url: %s, subjectExpr: '"out." + (idx %% 2 == 0 ? "even" : "odd")'}
`, srv.URL()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor))
	st, err := c.js.Stream(context.Background(), "out")
	require.NoError(t, err)
	si, err := st.Info(context.Background(), jetstreamSubjects())
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{"out.even": 50, "out.odd": 50}, si.State.Subjects)
}

// TestSinkFailedPublishFailsTheJob: when the stream disappears, publishes
// fail, the checkpoint fails and the job fails over (here: fails).
func TestSinkFailedPublishFailsTheJob(t *testing.T) {
	srv := startServer(t, "out:out.>")
	c := connect(t, srv.URL())
	j := runtimetest.Start(t, fmt.Sprintf(`
name: lost
checkpointing: {interval: 50ms}
restartStrategy: {type: none}
operators:
  - {uid: in, type: datagen, rate: 2000}
  - {uid: out, type: nats, from: [in], url: %s, subject: out.x, publishTimeout: 2s}
`, srv.URL()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitCheckpoint(t, waitFor, j)
	// A publish in flight while the stream is deleted may get no answer at
	// all: it fails after publishTimeout.
	require.NoError(t, c.js.DeleteStream(context.Background(), "out"))
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	require.Contains(t, j.Info().Error, "nats sink")
	require.Contains(t, j.Info().Error, "checkpoint")
	t.Log(j.Info().Error)
}

// TestSinkMissingStream: a subject no stream captures is a clear error.
func TestSinkMissingStream(t *testing.T) {
	srv := startServer(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: nowhere
checkpointing: {interval: 1h}
restartStrategy: {type: none}
operators:
  - {uid: in, type: datagen, count: 1}
  - {uid: out, type: nats, from: [in], url: %s, subject: nowhere}
`, srv.URL()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	require.Contains(t, j.Info().Error, `no stream captures subject "nowhere"`)
}

func jetstreamSubjects() jetstream.StreamInfoOpt { return jetstream.WithSubjectFilter(">") }
