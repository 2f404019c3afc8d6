package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// openSource opens one subtask of a source directly, outside a job.
func openSource(t *testing.T, cfg sourceConfig, st *state.OperatorState) (*source, chan struct{}) {
	t.Helper()
	if st == nil {
		st = state.NewOperatorState()
	}
	wake := make(chan struct{}, 1)
	s := newSource(cfg)
	ctx := runtime.NewContext(runtime.ContextOptions{UID: "in", Type: "kafka", Parallelism: 1, Log: zerolog.Nop(), State: st,
		Wakeup: wake, Metrics: &runtime.Metrics{}})
	require.NoError(t, s.Open(ctx))
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, wake
}

func testBroker(t *testing.T, partitions int, values int) string {
	t.Helper()
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: []kafkabroker.Topic{{Name: "in", Partitions: partitions}}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	if values > 0 {
		msgs := make([]kafka.Message, values)
		for i := range msgs {
			msgs[i].Value = fmt.Appendf(nil, "%d", i)
		}
		tr := &kafka.Transport{}
		defer tr.CloseIdleConnections()
		w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: "in", Transport: tr, BatchTimeout: time.Millisecond,
			BatchSize: values, Balancer: &kafka.RoundRobin{}}
		require.NoError(t, w.WriteMessages(context.Background(), msgs...))
		require.NoError(t, w.Close())
	}
	return b.Addr()
}

func testConfig(addr string) sourceConfig {
	return sourceConfig{brokers: []string{addr}, topics: []string{"in"}, start: startEarliest, reset: startEarliest,
		outOfRange: startNone, retryTimeout: time.Minute}
}

// TestPollWaitsBriefly: without data Poll returns after about 50ms, or at
// once when the subtask's wakeup fires.
func TestPollWaitsBriefly(t *testing.T) {
	s, wake := openSource(t, testConfig(testBroker(t, 1, 0)), nil)
	b := &runtime.Batch{Records: make([]runtime.Record, 0, 8)}
	start := time.Now()
	require.NoError(t, s.Poll(b))
	assert.Empty(t, b.Records)
	waited := time.Since(start)
	assert.GreaterOrEqual(t, waited, pollWait)
	assert.Less(t, waited, 10*pollWait)

	wake <- struct{}{}
	start = time.Now()
	require.NoError(t, s.Poll(b))
	assert.Less(t, time.Since(start), pollWait)
}

// TestPollSplitsChunksExactly: small batches take chunks apart; every
// snapshot holds the offset of the next record to emit.
func TestPollSplitsChunksExactly(t *testing.T) {
	const n = 1000
	s, _ := openSource(t, testConfig(testBroker(t, 2, n)), nil)
	emitted := map[string]int{}
	for len(emitted) < n {
		b := &runtime.Batch{Records: make([]runtime.Record, 0, 7)}
		require.NoError(t, s.Poll(b))
		require.LessOrEqual(t, len(b.Records), 7)
		for _, r := range b.Records {
			emitted[string(r.Value)]++
		}
		require.NoError(t, s.SnapshotState(1))
		var next int64
		for _, p := range s.snap {
			next += p.next
		}
		require.Equal(t, int64(len(emitted)), next, "snapshot offsets sum to the records emitted")
	}
	assert.Len(t, emitted, n)
	assert.Equal(t, map[string]any{"offsets": map[string]int64{"in/0": n / 2, "in/1": n / 2}}, s.DescribeState())
	items := s.ctx.OperatorState().Get(partitionsList)
	require.Len(t, items, 2)
	assert.Equal(t, state.Union, s.ctx.OperatorState().Lists()[0].Mode)
}

// TestRestoreKeepsOwnedPartitions: a subtask keeps the restored positions
// of the partitions it owns at the new parallelism.
func TestRestoreKeepsOwnedPartitions(t *testing.T) {
	addr := testBroker(t, 4, 8)
	st := state.NewOperatorState()
	var items [][]byte
	for p := range 4 {
		items = append(items, position{tp: topicPartition{"in", p}, next: 1, stop: 2}.encode())
	}
	items = append(items, position{tp: topicPartition{"gone", 0}, next: 5, stop: noStop}.encode())
	st.Set(partitionsList, state.Union, items)
	s := newSource(testConfig(addr))
	ctx := runtime.NewContext(runtime.ContextOptions{UID: "in", Subtask: 1, Parallelism: 3, Log: zerolog.Nop(), State: st, Metrics: &runtime.Metrics{}})
	require.NoError(t, s.Open(ctx))
	defer s.Close()
	var got []position
	for _, p := range s.parts {
		got = append(got, p.pos)
	}
	// "in" starts at subtask 2 (owner of in/0 at parallelism 3): subtask 1 owns in/2.
	assert.Equal(t, []position{{tp: topicPartition{"in", 2}, next: 1, stop: noStop}}, got,
		"unbounded: stop offsets of a bounded snapshot are dropped; topic gone is dropped")
}
