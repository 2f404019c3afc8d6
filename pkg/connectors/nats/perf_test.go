package nats_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// perfCount is the messages each reader reads (FLINKGO_NATS_PERF_COUNT
// overrides it).
func perfCount() int {
	if v, err := strconv.Atoi(os.Getenv("FLINKGO_NATS_PERF_COUNT")); err == nil && v > 0 {
		return v
	}
	return 600_000
}

// BenchmarkQueueVsPlainClient compares, on one server and one
// stream, a plain nats.go pull consumer that acks in batches of 500 with
// a flinkgo job (queue source, at-least-once, 1s checkpoints → discard).
// Both read the same messages through their own durable consumer; each
// is timed until it has received every message and the server has every
// ack. It prints records/s and the ratio (goal ≥ 0.7).
func BenchmarkQueueVsPlainClient(b *testing.B) {
	if raceEnabled {
		b.Skip("throughput comparison: not under -race")
	}
	n := perfCount()
	srv := startServer(b, "perf:perf.in")
	began := time.Now()
	sent, err := natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: srv.URL(), Subject: "perf.in", Count: int64(n)})
	require.NoError(b, err)
	b.Logf("produced %d messages in %s", sent, time.Since(began).Round(time.Millisecond))
	c := connect(b, srv.URL())
	// Two rounds, alternating, each reader through a new durable; the
	// best round of each counts (the machine's noise is one-sided).
	var plain, job [2]timing
	for round := range 2 {
		plain[round] = plainPull(b, c, fmt.Sprintf("plain%d", round), n)
		job[round] = jobPull(b, srv.URL(), c, fmt.Sprintf("flinkgo%d", round), n)
		b.Logf("round %d: plain nats.go pull consumer, acks in batches of 500: %s", round+1, plain[round].report(n))
		b.Logf("round %d: flinkgo queue source (at-least-once, 1s checkpoints) → discard: %s", round+1, job[round].report(n))
	}
	p, f := best(plain), best(job)
	b.Logf("records/s until every message was received and acknowledged: plain %.0f, flinkgo %.0f: ratio %.2f (goal ≥ 0.7)",
		float64(n)/p.acked.Seconds(), float64(n)/f.acked.Seconds(), p.acked.Seconds()/f.acked.Seconds())
	b.Logf("records/s while receiving (flinkgo defers its acks to the checkpoints): plain %.0f, flinkgo %.0f: ratio %.2f",
		float64(n)/p.received.Seconds(), float64(n)/f.received.Seconds(), p.received.Seconds()/f.received.Seconds())
}

// timing is how long a reader took to receive every message, and until
// the server had every ack.
type timing struct{ received, acked time.Duration }

func (m timing) report(n int) string {
	return fmt.Sprintf("received %d in %s (%.0f records/s), all acked after %s", n, m.received.Round(time.Millisecond),
		float64(n)/m.received.Seconds(), m.acked.Round(time.Millisecond))
}

func best(ts [2]timing) timing {
	if ts[1].acked < ts[0].acked {
		return ts[1]
	}
	return ts[0]
}

const perfBacklog = 400_000

func plainPull(t testing.TB, c *client, durable string, n int) timing {
	ctx := context.Background()
	st, err := c.js.Stream(ctx, "perf")
	require.NoError(t, err)
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: durable, AckPolicy: jetstream.AckExplicitPolicy,
		MaxAckPending: perfBacklog, AckWait: 30 * time.Second})
	require.NoError(t, err)
	ack := []byte("+ACK")
	replies := make([]string, 0, 500)
	got := 0
	done := make(chan struct{})
	start := time.Now()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		got++
		replies = append(replies, m.Reply())
		if len(replies) == cap(replies) || got == n {
			for _, r := range replies {
				_ = c.nc.Publish(r, ack)
			}
			replies = replies[:0]
		}
		if got == n {
			close(done)
		}
	}, jetstream.PullMaxMessages(1024))
	require.NoError(t, err)
	<-done
	received := time.Since(start)
	cc.Stop()
	waitAcked(t, c, durable, n)
	return timing{received: received, acked: time.Since(start)}
}

func jobPull(t testing.TB, url string, c *client, durable string, n int) timing {
	start := time.Now()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: perf
checkpointing: {interval: 1s}
operators:
  - {uid: in, type: nats, url: %s, stream: perf, mode: queue, durable: %s, queueSemantics: at-least-once, maxBacklog: %d}
  - {uid: out, type: discard, from: [in]}
`, url, durable, perfBacklog), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	runtimetest.WaitUntil(t, waitFor, "every record", func() bool { return j.Info().Operators[1].RecordsIn >= int64(n) })
	received := time.Since(start)
	waitAcked(t, c, durable, n)
	return timing{received: received, acked: time.Since(start)}
}

// waitAcked waits until the server has every message of durable acked.
func waitAcked(t testing.TB, c *client, durable string, n int) {
	runtimetest.WaitUntil(t, waitFor, durable+" acked", func() bool {
		info := c.consumer(t, "perf", durable)
		return info.AckFloor.Consumer >= uint64(n) && info.NumAckPending == 0
	})
}
