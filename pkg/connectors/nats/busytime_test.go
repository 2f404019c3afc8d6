package nats_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// TestTrickleSourceIsIdle: a source reading 1,000 messages/s spends its
// time waiting for the server, which is idle time, not busy time.
func TestTrickleSourceIsIdle(t *testing.T) {
	for _, mode := range []string{"bookmark, discardOn: emit, durable: d", "queue, durable: d, queueSemantics: at-most-once"} {
		t.Run(mode, func(t *testing.T) {
			srv := startServer(t, "b:b.in")
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = natsserver.Produce(ctx, natsserver.ProduceConfig{URL: srv.URL(), Subject: "b.in", Rate: 1000})
			}()
			defer wg.Wait()
			defer cancel()
			j := runtimetest.Start(t, fmt.Sprintf(`
name: trickle
operators:
  - {uid: in, type: nats, url: %s, stream: b, mode: %s, format: json}
  - {uid: out, type: discard, from: [in]}
`, srv.URL(), mode), runtimetest.Options{Types: testTypes})
			defer func() {
				require.NoError(t, j.Cancel())
				runtimetest.Wait(t, j, waitFor)
			}()
			require.Eventually(t, func() bool { return j.Info().Operators[0].RecordsOut > 500 }, waitFor, 10*time.Millisecond)
			first := j.Info().Operators[0].Subtasks[0]
			time.Sleep(2 * time.Second)
			last := j.Info().Operators[0].Subtasks[0]
			busy := last.AccumulatedBusyTimeMs - first.AccumulatedBusyTimeMs
			idle := last.AccumulatedIdleTimeMs - first.AccumulatedIdleTimeMs
			bp := last.AccumulatedBackPressuredTimeMs - first.AccumulatedBackPressuredTimeMs
			t.Logf("over 2s: busy %d ms, idle %d ms, backpressured %d ms", busy, idle, bp)
			require.Greater(t, busy+idle+bp, int64(1500), "the three add up to the time passed")
			require.Less(t, float64(busy)/float64(busy+idle+bp), 0.3, "waiting for the server is idle time")
		})
	}
}
