package kafka_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// TestTrickleSourceIsIdle: a source reading 1,000 records/s spends its
// time waiting on the broker, which is idle time, not busy time (it
// showed 97–99% busy at ~4% of a core).
func TestTrickleSourceIsIdle(t *testing.T) {
	b := startBroker(t, "in:1")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = produce.Run(ctx, produce.Config{Brokers: []string{b.Addr()}, Topic: "in", Rate: 1000})
	}()
	defer wg.Wait()
	defer cancel()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: trickle
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, format: raw}
  - {uid: out, type: discard, from: [in]}
`, b.Addr()), runtimetest.Options{Types: testTypes})
	defer func() {
		require.NoError(t, j.Cancel())
		runtimetest.Wait(t, j, waitFor)
	}()
	require.Eventually(t, func() bool { return operator(t, j, "in").RecordsOut > 500 }, waitFor, 10*time.Millisecond)
	first := operator(t, j, "in").Subtasks[0]
	time.Sleep(2 * time.Second)
	last := operator(t, j, "in").Subtasks[0]
	busy := last.AccumulatedBusyTimeMs - first.AccumulatedBusyTimeMs
	idle := last.AccumulatedIdleTimeMs - first.AccumulatedIdleTimeMs
	bp := last.AccumulatedBackPressuredTimeMs - first.AccumulatedBackPressuredTimeMs
	t.Logf("over 2s: busy %d ms, idle %d ms, backpressured %d ms", busy, idle, bp)
	require.Greater(t, busy+idle+bp, int64(1500), "the three add up to the time passed")
	require.Less(t, float64(busy)/float64(busy+idle+bp), 0.3, "waiting on the broker is idle time")
}
