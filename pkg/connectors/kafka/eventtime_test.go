package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// idleSpec: one subtask reading all four partitions of topic "in", with
// event time from the records' ts field; idle sets eventTime.idleTimeout.
func idleSpec(addr, name, idle string) string {
	return fmt.Sprintf(`
name: idle
watermarkInterval: 5ms
checkpointing: {interval: 1h}
operators:
  - uid: in
    type: kafka
    brokers: [%s]
    topic: in
    format: json
    eventTime: {timestamp: ts, maxOutOfOrderness: 0s%s}
  - {uid: byUser, type: keyBy, from: [in], expr: user}
  - uid: perSecond
    type: window
    from: [byUser]
    window: {type: tumbling, size: 1s}
    aggregate: {clicks: count()}
  - {uid: out, type: test-collect, from: [perSecond], name: %s}
`, addr, idle, name)
}

// Watermarks are per partition, and the subtask's the minimum over them:
// a partition that receives nothing holds every window back, unless
// idleTimeout lets it drop out. Partitions 0-2 receive a record each 20 ms
// (100 ms of event time apart); partition 3 none.
func TestIdlePartitionHoldsWindowsUnlessIdleTimeout(t *testing.T) {
	t.Parallel() // waits on timeouts and restarts with its own broker
	b := startBroker(t, "in:4")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(0); ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			produceTo(t, b.Addr(), "in", int(i%3), fmt.Sprintf(`{"user": "u%d", "ts": %d}`, i%2, 1_000_000+i*100))
		}
	}()
	defer func() { close(stop); <-done }()

	waiting := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, idleSpec(b.Addr(), waiting, ""), runtimetest.Options{Types: testTypes})
	runtimetest.WaitUntil(t, waitFor, "records read", func() bool { return operator(t, j, "perSecond").RecordsIn > 40 })
	require.Empty(t, runtimetest.Values(waiting), "no window fires while partition 3 holds the watermark back")
	require.Nil(t, operator(t, j, "perSecond").InputWatermark, "no watermark reached the window")
	require.Zero(t, operator(t, j, "in").Metrics["idleSplits"])
	runtimetest.Cancel(t, waitFor, j)

	firing := runtimetest.UniqueName(t)
	j = runtimetest.Start(t, idleSpec(b.Addr(), firing, ", idleTimeout: 200ms"), runtimetest.Options{Types: testTypes})
	// Each second of event time holds 10 records of two users: a window per
	// user and second once partition 3 is idle.
	runtimetest.WaitCollected(t, waitFor, firing, 4)
	require.Equal(t, int64(1), operator(t, j, "in").Metrics["idleSplits"], "the empty partition is reported idle")
	require.NotNil(t, operator(t, j, "perSecond").InputWatermark)
	runtimetest.Cancel(t, waitFor, j)
}
