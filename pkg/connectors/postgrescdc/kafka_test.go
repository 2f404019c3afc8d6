package postgrescdc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
)

// TestExactlyOnceIntoKafka: changes while the job runs, through two
// failures, into the exactly-once (transactional) Kafka sink: a
// read_committed reader sees every change once, keyed by the primary key.
func TestExactlyOnceIntoKafka(t *testing.T) {
	t.Parallel()
	url := database(t)
	tp, err := kafkabroker.ParseTopic("cdc")
	require.NoError(t, err)
	broker, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Topics: []kafkabroker.Topic{tp}})
	require.NoError(t, err)
	defer func() { require.NoError(t, broker.Close()) }()
	db := connect(t, url)
	w := setupItems(t, db, 20)
	failName := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: cdc-kafka
checkpointing: {interval: 100ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 20ms}
operators:
  - {uid: in, type: postgres-cdc, url: "%s", tables: [items], slot: kafka_test}
  - {uid: fail, type: test-fail, from: [in], name: %s, every: 120, times: 2}
  - {uid: out, type: kafka, from: [fail], brokers: [%s], topic: cdc, deliveryGuarantee: exactly-once}
`, url, failName, broker.Addr()), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	defer runtimetest.Cancel(t, waitFor, j)
	waitSlotActive(t, db, "kafka_test")
	// The failures come after a checkpoint: a failure before the first one
	// restarts the job without state, which takes a new snapshot (the
	// table as it is then, not the changes that made it).
	runtimetest.WaitCheckpoint(t, waitFor, j)
	w.run(t, 300, 1000)
	runtimetest.WaitUntil(t, waitFor, "two failures", func() bool { return runtimetest.Fired(failName) == 2 })

	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr()), kgo.ConsumeTopics("cdc"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	var got []string
	quiet := time.Time{}
	end := time.Now().Add(waitFor)
	for len(got) < len(w.expected) || time.Since(quiet) < 500*time.Millisecond {
		require.True(t, time.Now().Before(end), "%d of %d changes read", len(got), len(w.expected))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, changeID(t, string(r.Value)))
			require.Contains(t, string(r.Value), `"id":`+string(r.Key[len(`{"id":`):len(r.Key)-1]), "key %s", r.Key)
			quiet = time.Now()
		})
		if len(got) >= len(w.expected) && quiet.IsZero() {
			quiet = time.Now()
		}
	}
	requireOnce(t, got, w.expected)
}
