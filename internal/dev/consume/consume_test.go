package consume_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/consume"
	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeTxn writes values to topic in one transaction that commits or aborts.
func writeTxn(t *testing.T, addr, topic, id string, commit bool, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()
	require.NoError(t, cl.BeginTransaction())
	for _, v := range values {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr())
	}
	require.NoError(t, cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)))
}

func read(t *testing.T, cfg consume.KafkaConfig) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	_, err := consume.Kafka(ctx, cfg, func(r consume.Record) error {
		out = append(out, string(r.Value))
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestKafkaIsolationAndCount(t *testing.T) {
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: []kafkabroker.Topic{{Name: "t", Partitions: 2}}})
	require.NoError(t, err)
	defer b.Close()
	writeTxn(t, b.Addr(), "t", "a", true, `{"idx": 1}`, `{"idx": 2}`)
	writeTxn(t, b.Addr(), "t", "b", false, `{"idx": 2}`, `{"idx": 9}`)
	writeTxn(t, b.Addr(), "t", "a", true, `{"idx": 3}`)
	cfg := consume.KafkaConfig{Brokers: []string{b.Addr()}, Topic: "t", ReadCommitted: true}
	assert.ElementsMatch(t, []string{`{"idx": 1}`, `{"idx": 2}`, `{"idx": 3}`}, read(t, cfg))
	cfg.ReadCommitted = false
	assert.Len(t, read(t, cfg), 5, "read_uncommitted sees the aborted records")
	cfg.Count = 2
	assert.Len(t, read(t, cfg), 2)

	rep, err := verify.Kafka(context.Background(), verify.KafkaOptions{Brokers: []string{b.Addr()}, Topic: "t", Field: "idx"})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.Equal(t, int64(3), rep.Records)
	writeTxn(t, b.Addr(), "t", "a", true, `{"idx": 3}`, `{"idx": 5}`)
	rep, err = verify.Kafka(context.Background(), verify.KafkaOptions{Brokers: []string{b.Addr()}, Topic: "t", Field: "idx"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), rep.Duplicates)
	assert.Equal(t, int64(1), rep.GapCount)
}

func TestKafkaFollow(t *testing.T) {
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: []kafkabroker.Topic{{Name: "t", Partitions: 1}}})
	require.NoError(t, err)
	defer b.Close()
	writeTxn(t, b.Addr(), "t", "a", true, "1")
	written := make(chan struct{})
	go func() {
		defer close(written)
		time.Sleep(200 * time.Millisecond)
		writeTxn(t, b.Addr(), "t", "a", true, "2", "3")
	}()
	got := read(t, consume.KafkaConfig{Brokers: []string{b.Addr()}, Topic: "t", ReadCommitted: true, Follow: true, Count: 3})
	<-written // the writer's client closes after its commit, which the reader may see first
	assert.Equal(t, []string{"1", "2", "3"}, got)
}

func TestNATSSubject(t *testing.T) {
	s, err := natsserver.Start(natsserver.Config{Listen: "127.0.0.1:0", Streams: []natsserver.Stream{{Name: "seq", Subjects: []string{"seq.in"}}}})
	require.NoError(t, err)
	defer s.Close()
	_, err = natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL(), Subject: "seq.in", Count: 50})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []int64
	n, err := consume.NATS(ctx, consume.NATSConfig{URL: s.URL(), Subject: "seq.in"}, func(r consume.Record) error {
		got = append(got, r.Offset)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(50), n)
	assert.Equal(t, int64(50), got[49], "stream sequences")
	_, err = consume.NATS(ctx, consume.NATSConfig{URL: s.URL(), Subject: "nowhere"}, func(consume.Record) error { return nil })
	require.ErrorContains(t, err, "no stream captures subject")
}
