package produce

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestAppendRecord(t *testing.T) {
	assert.Equal(t, `{"idx": 42}`, string(AppendRecord(nil, 42)))
	assert.Equal(t, `x{"idx": -1}`, string(AppendRecord([]byte("x"), -1)))
}

func TestRunCountExactInOrder(t *testing.T) {
	const n = 25_000 // more than one chunk, and a partial last chunk
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 1})
	var calls []int64
	sent, err := Run(context.Background(), Config{
		Brokers: []string{addr}, Topic: "t", Count: n,
		Progress: func(sent, last int64) {
			assert.Equal(t, sent, last, "Start 1: last idx equals the count")
			calls = append(calls, sent)
		},
	})
	require.NoError(t, err)
	assert.Equal(t, int64(n), sent)
	require.NotEmpty(t, calls)
	assert.Equal(t, int64(n), calls[len(calls)-1], "progress at the end")

	assert.Equal(t, int64(n), lastOffset(t, addr, "t", 0), "no extra records")
	for i, v := range readValues(t, addr, "t", 0, n) {
		require.Equal(t, fmt.Sprintf(`{"idx": %d}`, i+1), v)
	}
}

func TestRunRoundRobinFromStart(t *testing.T) {
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 3})
	sent, err := Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Start: 100, Count: 30})
	require.NoError(t, err)
	assert.Equal(t, int64(30), sent)

	seen := map[string]bool{}
	for p := range 3 {
		vals := readValues(t, addr, "t", p, 10)
		for i, v := range vals {
			seen[v] = true
			if i > 0 {
				assert.Less(t, idx(t, vals[i-1]), idx(t, v), "increasing within partition %d", p)
			}
		}
	}
	for i := int64(100); i < 130; i++ {
		assert.True(t, seen[string(AppendRecord(nil, i))], "idx %d", i)
	}
}

func TestRunFixedPartition(t *testing.T) {
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 3})
	two := 2
	sent, err := Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Partition: &two, Count: 50})
	require.NoError(t, err)
	assert.Equal(t, int64(50), sent)
	assert.Equal(t, int64(0), lastOffset(t, addr, "t", 0))
	assert.Equal(t, int64(0), lastOffset(t, addr, "t", 1))
	assert.Equal(t, int64(50), lastOffset(t, addr, "t", 2))
}

func TestRunCancelReportsExactCount(t *testing.T) {
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	sent, err := Run(ctx, Config{Brokers: []string{addr}, Topic: "t"})
	require.NoError(t, err, "ctx done is a normal end")
	require.Positive(t, sent)
	assert.Equal(t, sent, lastOffset(t, addr, "t", 0)+lastOffset(t, addr, "t", 1),
		"sent is exactly what reached the topic")
}

func TestRunCancelledBeforeStart(t *testing.T) {
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sent, err := Run(ctx, Config{Brokers: []string{addr}, Topic: "t"})
	require.NoError(t, err)
	assert.Zero(t, sent)
	assert.Zero(t, lastOffset(t, addr, "t", 0))
}

func TestRunRate(t *testing.T) {
	const rate, window = 5000.0, 2 * time.Second
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 1})

	var mu sync.Mutex
	var atOneSecond int64
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	sent, err := Run(ctx, Config{
		Brokers: []string{addr}, Topic: "t", Rate: rate,
		Progress: func(sent, _ int64) {
			mu.Lock()
			defer mu.Unlock()
			if atOneSecond == 0 {
				atOneSecond = int64(float64(sent) / time.Since(start).Seconds())
			}
		},
	})
	require.NoError(t, err)
	elapsed := time.Since(start)
	got := float64(sent) / elapsed.Seconds()
	t.Logf("rate %v: sent %d in %v = %.0f records/s; first progress at %d records/s", rate, sent, elapsed, got, atOneSecond)
	assert.InEpsilon(t, rate, got, 0.05, "rate over %v", window)
	assert.InEpsilon(t, rate, float64(atOneSecond), 0.10, "smooth: the rate holds after the first second too")
}

func TestRunRateWithCount(t *testing.T) {
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 1})
	start := time.Now()
	sent, err := Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Rate: 200, Count: 100})
	require.NoError(t, err)
	assert.Equal(t, int64(100), sent)
	assert.InDelta(t, 500*time.Millisecond, time.Since(start), float64(100*time.Millisecond))
}

func TestRunErrors(t *testing.T) {
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 2})
	two, neg := 2, -1
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no brokers", Config{Topic: "t"}, "no brokers"},
		{"no topic", Config{Brokers: []string{addr}}, "no topic"},
		{"negative count", Config{Brokers: []string{addr}, Topic: "t", Count: -1}, "count -1"},
		{"negative rate", Config{Brokers: []string{addr}, Topic: "t", Rate: -1}, "rate -1"},
		{"negative partition", Config{Brokers: []string{addr}, Topic: "t", Partition: &neg}, "partition -1"},
		{"unknown topic", Config{Brokers: []string{addr}, Topic: "missing", Count: 1}, "Unknown Topic Or Partition"},
		{"partition out of range", Config{Brokers: []string{addr}, Topic: "t", Partition: &two, Count: 1}, "partition 2: topic has 2 partitions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent, err := Run(context.Background(), tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Zero(t, sent)
		})
	}
}

func TestRunBrokerUnreachable(t *testing.T) {
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	addr := b.Addr()
	require.NoError(t, b.Close())
	_, err = Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Count: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read metadata")
}

// BenchmarkRunUnlimited measures dev produce without a rate limit, into 1
// and 4 partitions of the embedded broker.
func BenchmarkRunUnlimited(b *testing.B) {
	if raceEnabled {
		b.Skip("throughput measurement: not under -race")
	}
	const n = 500_000
	for _, partitions := range []int{1, 4} {
		addr := startBroker(b, kafkabroker.Topic{Name: "t", Partitions: partitions})
		start := time.Now()
		sent, err := Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Count: n})
		require.NoError(b, err)
		require.Equal(b, int64(n), sent)
		elapsed := time.Since(start)
		b.Logf("unlimited, %d partitions: %d records in %v = %.0f records/s",
			partitions, n, elapsed.Round(time.Millisecond), n/elapsed.Seconds())
	}
}

// --- helpers

func startBroker(t testing.TB, topics ...kafkabroker.Topic) string {
	t.Helper()
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: topics})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	return b.Addr()
}

func lastOffset(t *testing.T, addr, topic string, partition int) int64 {
	t.Helper()
	conn, err := kafka.DialLeader(context.Background(), "tcp", addr, topic, partition)
	require.NoError(t, err)
	defer conn.Close()
	last, err := conn.ReadLastOffset()
	require.NoError(t, err)
	return last
}

func readValues(t *testing.T, addr, topic string, partition, n int) []string {
	t.Helper()
	vals := make([]string, 0, n)
	for _, m := range readMessages(t, addr, topic, partition, n) {
		vals = append(vals, string(m.Value))
	}
	return vals
}

func readMessages(t *testing.T, addr, topic string, partition, n int) []kafka.Message {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{addr}, Topic: topic, Partition: partition,
		MaxBytes: 10 << 20, MaxWait: 200 * time.Millisecond, // Close waits out MaxWait
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs := make([]kafka.Message, 0, n)
	for range n {
		m, err := r.FetchMessage(ctx)
		require.NoError(t, err)
		msgs = append(msgs, m)
	}
	return msgs
}

func idx(t *testing.T, v string) int64 {
	t.Helper()
	var n int64
	_, err := fmt.Sscanf(v, `{"idx": %d}`, &n)
	require.NoError(t, err)
	return n
}
