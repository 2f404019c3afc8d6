package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// TestNATSQueueSurvivesKillDaemon: a queue source (at-least-once) into the
// file sink, the daemon killed with SIGKILL while messages flow. The
// broker redelivers what the dead daemon had not acknowledged, after the
// default ackWait (5s: seconds, not NATS's 30s); the finished files hold
// every message, duplicates at most the messages unacknowledged at the
// kill (≤ maxBacklog).
// Sequential (no t.Parallel): it bounds the redelivery after the kill by
// wall time.
func TestNATSQueueSurvivesKillDaemon(t *testing.T) {
	srv, err := natsserver.Start(natsserver.Config{Listen: "127.0.0.1:0",
		Streams: []natsserver.Stream{{Name: "q", Subjects: []string{"q.in"}}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	const total, backlog = 20000, 1000
	id := e.mustRun("run", e.writeSpec("nats.yaml", fmt.Sprintf(`
name: nats-queue-to-files
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 100ms}
operators:
  - {uid: in, type: nats, url: %s, stream: q, mode: queue, durable: files, queueSemantics: at-least-once,
     maxBacklog: %d, format: json}
  - {uid: out, type: file, from: [in], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, srv.URL(), backlog, out)))

	produced := make(chan error, 1)
	go func() {
		_, err := natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: srv.URL(), Subject: "q.in", Count: total, Rate: 4000})
		produced <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info := e.info(id)
		if info.Checkpoints != nil && info.Checkpoints.Completed >= 5 && info.Operators[0].RecordsOut > 2000 {
			m := info.Operators[0].Metrics
			require.Contains(t, m, "pendingAcks", "info shows the messages pending acknowledgement")
			require.Contains(t, m, "acksSent")
			t.Logf("before the kill: %d records read, pendingAcks %d, acksSent %d", info.Operators[0].RecordsOut, m["pendingAcks"], m["acksSent"])
			break
		}
		require.True(t, time.Now().Before(deadline), "no progress: %+v", info)
		time.Sleep(50 * time.Millisecond)
	}
	e.killDaemon()
	killed := time.Now()
	e.startDaemon()
	require.NoError(t, <-produced)

	nc, err := nats.Connect(srv.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	deadline = time.Now().Add(60 * time.Second)
	for {
		cons, err := js.Consumer(context.Background(), "q", "files")
		require.NoError(t, err)
		ci, err := cons.Info(context.Background())
		require.NoError(t, err)
		if ci.NumPending == 0 && ci.NumAckPending == 0 {
			t.Logf("consumer: %d delivered, %d redelivered; all acknowledged %s after the kill (ackWait %s)",
				ci.Delivered.Consumer, ci.Delivered.Consumer-total, time.Since(killed).Round(100*time.Millisecond), ci.Config.AckWait)
			// The dead daemon's messages came back after the default
			// ackWait, not after NATS's 30s.
			require.Equal(t, 5*time.Second, ci.Config.AckWait)
			require.Less(t, time.Since(killed), 20*time.Second, "the messages the dead daemon held were redelivered within seconds")
			break
		}
		require.True(t, time.Now().Before(deadline), "messages left: %d pending, %d unacknowledged\n%s", ci.NumPending, ci.NumAckPending, e.stderr.String())
		time.Sleep(100 * time.Millisecond)
	}
	// Every message is acknowledged, so its checkpoint committed its file.
	e.mustRun("stop", id, "-p", filepath.Join(e.home, "savepoints"))
	e.waitState(id, api.StateFinished, 30*time.Second)

	rep, err := verify.Run(verify.Options{Path: out, Field: "idx"})
	require.NoError(t, err)
	t.Logf("finished files: %d records, idx %d..%d, %d missing, %d duplicated (bound: maxBacklog %d)", rep.Records, rep.First, rep.Last, rep.GapCount, rep.Duplicates, backlog)
	require.Zero(t, rep.GapCount, "no message lost: %+v", rep)
	require.Zero(t, rep.Unparseable)
	require.Equal(t, int64(1), rep.First)
	require.Equal(t, int64(total), rep.Last)
	require.Equal(t, int64(total), rep.Distinct)
	require.LessOrEqual(t, rep.Duplicates, int64(backlog), "duplicates at most the messages unacknowledged at the kill")
}
