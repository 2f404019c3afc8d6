package produce

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/payload"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// readAll reads every message of a partition.
func readAll(t *testing.T, addr, topic string, partition int) []kafka.Message {
	t.Helper()
	return readMessages(t, addr, topic, partition, int(lastOffset(t, addr, topic, partition)))
}

func maker(t *testing.T, o payload.Options) *payload.Maker {
	t.Helper()
	m, err := payload.New(o)
	require.NoError(t, err)
	return m
}

// With a key expression every record carries its key, a key's records
// share one partition (murmur2, as the Java client), in idx order there.
func TestRunExpressionWithKeys(t *testing.T) {
	const n = 3000
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 3})
	recs := maker(t, payload.Options{Expr: `{"user": "u" + string(idx % 10), "idx": idx}`, KeyExpr: `"u" + string(idx % 10)`})
	sent, err := Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Count: n, Records: recs})
	require.NoError(t, err)
	require.Equal(t, int64(n), sent)

	partitionOf := map[string]int{}
	seen := map[int64]bool{}
	for p := range 3 {
		last := int64(0)
		for _, m := range readAll(t, addr, "t", p) {
			var idx int64
			var user string
			_, err := fmt.Sscanf(string(m.Value), `{"idx":%d,"user":%q}`, &idx, &user)
			require.NoError(t, err, string(m.Value))
			require.Equal(t, fmt.Sprintf("u%d", idx%10), string(m.Key))
			require.Equal(t, string(m.Key), user)
			require.Greater(t, idx, last, "idx order within partition %d", p)
			last = idx
			if q, ok := partitionOf[user]; ok {
				require.Equal(t, q, p, "key %s in one partition", user)
			}
			partitionOf[user] = p
			seen[idx] = true
		}
	}
	require.Len(t, seen, n)
	used := map[int]bool{}
	for _, p := range partitionOf {
		used[p] = true
	}
	require.Greater(t, len(used), 1, "keys spread over partitions: %v", partitionOf)
}

// --events: the values are datagen's records, the Kafka timestamps their
// event times.
func TestRunEvents(t *testing.T) {
	o := datagen.DefaultEventOptions()
	o.OutOfOrderness, o.LateEvery, o.LateBy = 2*time.Second, 50, time.Minute
	g, err := datagen.NewEvents(o)
	require.NoError(t, err)
	addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 2})
	sent, err := Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Count: 1000, Records: maker(t, payload.Options{Events: &o})})
	require.NoError(t, err)
	require.Equal(t, int64(1000), sent)
	got := 0
	for p := range 2 {
		for i, m := range readAll(t, addr, "t", p) {
			idx := int64(1 + p + 2*i) // round robin
			e := g.At(idx)
			require.Equal(t, string(g.Append(nil, e)), string(m.Value))
			require.Equal(t, e.TS, m.Time.UnixMilli(), "idx %d", idx)
			require.Nil(t, m.Key)
			got++
		}
	}
	require.Equal(t, 1000, got)
}

// An expression failing at some idx stops Run there: the records before it
// are written and counted, nothing after.
func TestRunExpressionFailsMidway(t *testing.T) {
	for _, rate := range []float64{0, 200_000} { // one chunk, or several of 2000
		addr := startBroker(t, kafkabroker.Topic{Name: "t", Partitions: 1})
		recs := maker(t, payload.Options{Expr: `string(10 % (idx - 4500))`, First: 1})
		sent, err := Run(context.Background(), Config{Brokers: []string{addr}, Topic: "t", Count: 9000, Rate: rate, Records: recs})
		require.ErrorIs(t, err, payload.ErrExpr)
		require.ErrorContains(t, err, "at idx 4500")
		assert.Equal(t, int64(4499), sent, "rate %v", rate)
		assert.Equal(t, int64(4499), lastOffset(t, addr, "t", 0), "exactly the records before the failure")
	}
}
