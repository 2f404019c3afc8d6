package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/flinkgo/flinkgo/internal/dev/consume"
	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// writerEnv is a txnWriter's world: a 3-node broker and a topic.
type writerEnv struct {
	t    *testing.T
	b    *kafkabroker.Broker
	opts []franzConfig
}

func newWriterEnv(t *testing.T) *writerEnv {
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", Nodes: 3,
		Topics: []kafkabroker.Topic{{Name: "out", Partitions: 2}}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	return &writerEnv{t: t, b: b}
}

// writer returns a txnWriter for subtask 0 of 1 with prefix p, with its
// client closed at the end of the test.
func (e *writerEnv) writer(prefix string, extra ...franzConfig) *txnWriter {
	cfg := franzConfig{brokers: []string{e.b.Addr()}, topic: "out", transactionTimeout: time.Minute, deliveryTimeout: 10 * time.Second}
	for _, x := range extra {
		cfg.extra = append(cfg.extra, x.extra...)
		if x.transactionTimeout > 0 {
			cfg.transactionTimeout = x.transactionTimeout
		}
	}
	cl, err := newFranzClient(cfg)
	require.NoError(e.t, err)
	w := newTxnWriter(txnConfig{Prefix: prefix, Subtask: 0, Parallelism: 1, PoolSize: 3, Timeout: 10 * time.Second},
		cl, zerolog.Nop(), nil, nil)
	e.t.Cleanup(func() {
		w.Close()
		cl.Close()
	})
	return w
}

func writeRange(t *testing.T, w *txnWriter, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		require.NoError(t, w.Write(nil, []byte(strconv.Itoa(i)), 0))
	}
}

// committed reads the committed values of out with an independent reader.
func (e *writerEnv) committed() map[string]int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]int{}
	_, err := consume.Kafka(ctx, consume.KafkaConfig{Brokers: []string{e.b.Addr()}, Topic: "out", ReadCommitted: true},
		func(r consume.Record) error {
			out[string(r.Value)]++
			return nil
		})
	require.NoError(e.t, err)
	return out
}

func requireOnce(t *testing.T, got map[string]int, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		require.Equal(t, 1, got[strconv.Itoa(i)], "value %d", i)
	}
	require.Len(t, got, to-from+1)
}

// TestZombieSinkIsFenced: an old sink instance pauses after writing and
// pre-committing; a new instance restores from the checkpoint before and
// takes over its transactional ids. When the old one resumes, its commit
// and its writes are fenced, and nothing it wrote after the restored
// checkpoint becomes visible.
func TestZombieSinkIsFenced(t *testing.T) {
	e := newWriterEnv(t)
	zombie := e.writer("job")
	require.NoError(t, zombie.Start())
	writeRange(t, zombie, 1, 10)
	cp1, err := zombie.PreCommit(1)
	require.NoError(t, err)
	require.NoError(t, zombie.Commit(1))
	writeRange(t, zombie, 11, 20)
	_, err = zombie.PreCommit(2) // checkpoint 2 never completes for the new instance
	require.NoError(t, err)
	writeRange(t, zombie, 21, 25) // open when it pauses

	// The new instance restores checkpoint 1, fences the pool and replays.
	fresh := e.writer("job")
	require.NoError(t, fresh.Restore([]poolEntry{cp1}))
	writeRange(t, fresh, 11, 30)
	_, err = fresh.PreCommit(3)
	require.NoError(t, err)

	// The zombie resumes: its commit of checkpoint 2 finds its transaction
	// aborted by the fence, its next writes fail.
	err = zombie.Commit(2)
	var rb *runtime.RestoreBeforeError
	require.ErrorAs(t, err, &rb, "%v", err)
	assert.Equal(t, int64(2), rb.Checkpoint)
	assert.Contains(t, err.Error(), "was aborted by the broker before it could be committed")
	err = zombie.Write(nil, []byte("26"), 0) // fails at once if the fence is known already
	if err == nil {
		_, err = zombie.PreCommit(4)
	}
	require.Error(t, err, "writes of a fenced producer fail")

	require.NoError(t, fresh.Commit(3))
	requireOnce(t, e.committed(), 1, 30)
}

// TestRecommitIsIdempotent: restoring the same snapshot again commits
// nothing twice; a transaction committed and then followed by newer ones
// on the same id is recognised as committed (from the log).
func TestRecommitIsIdempotent(t *testing.T) {
	e := newWriterEnv(t)
	w := e.writer("idem")
	require.NoError(t, w.Start())
	writeRange(t, w, 1, 10)
	cp1, err := w.PreCommit(1)
	require.NoError(t, err)
	require.Len(t, cp1.Pending, 1)
	require.NoError(t, w.Commit(1))
	for n := int64(2); n <= 4; n++ { // the same ids move on to newer epochs
		writeRange(t, w, int(n)*10-9, int(n)*10)
		_, err := w.PreCommit(n)
		require.NoError(t, err)
		require.NoError(t, w.Commit(n))
	}
	w.Close()
	for range 2 {
		r := e.writer("idem")
		require.NoError(t, r.Restore([]poolEntry{cp1}))
		assert.Equal(t, int64(1), r.Stats().Recommitted)
	}
	requireOnce(t, e.committed(), 1, 40)
}

// TestEpochsNeverRepeatOnOlderBrokers: against a broker without KIP-890
// (EndTxn v4: the epoch stays after a commit) the writer gives every
// transaction a new producer, so no two committables share an epoch.
func TestEpochsNeverRepeatOnOlderBrokers(t *testing.T) {
	e := newWriterEnv(t)
	w := e.writer("old", franzConfig{extra: olderBroker()})
	require.NoError(t, w.Start())
	seen := map[string]bool{}
	for n := int64(1); n <= 4; n++ {
		writeRange(t, w, int(n)*10-9, int(n)*10)
		s, err := w.PreCommit(n)
		require.NoError(t, err)
		c := s.Pending[len(s.Pending)-1]
		key := fmt.Sprintf("%s/%d/%d", c.ID, c.ProducerID, c.Epoch)
		require.False(t, seen[key], "transaction %s reuses %s", c, key)
		seen[key] = true
		require.NoError(t, w.Commit(n))
	}
	requireOnce(t, e.committed(), 1, 40)
}

// TestPoolExhaustion: with every id holding a transaction that waits for
// a checkpoint, the next record fails with an error naming the option.
func TestPoolExhaustion(t *testing.T) {
	e := newWriterEnv(t)
	w := e.writer("full")
	require.NoError(t, w.Start())
	for n := int64(1); n <= 3; n++ { // three checkpoints that never complete
		writeRange(t, w, int(n), int(n))
		_, err := w.PreCommit(n)
		require.NoError(t, err)
	}
	err := w.Write(nil, []byte("4"), 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "raise transactionalIdPoolSize")
	require.NoError(t, w.Commit(3))
	require.NoError(t, w.Write(nil, []byte("4"), 0), "commits free the ids")
}

// TestLostTransactionIsDetected: a pre-committed transaction the broker
// aborts (its timeout passed) is a RestoreBeforeError naming its
// checkpoint, at commit and at a restore of the snapshot holding it.
func TestLostTransactionIsDetected(t *testing.T) {
	e := newWriterEnv(t)
	w := e.writer("exp", franzConfig{transactionTimeout: 300 * time.Millisecond})
	require.NoError(t, w.Start())
	writeRange(t, w, 1, 10)
	cp1, err := w.PreCommit(1)
	require.NoError(t, err)
	time.Sleep(time.Second)
	err = w.Commit(1)
	var rb *runtime.RestoreBeforeError
	require.True(t, errors.As(err, &rb), "%v", err)
	assert.Equal(t, int64(1), rb.Checkpoint)
	r := e.writer("exp", franzConfig{transactionTimeout: 300 * time.Millisecond})
	err = r.Restore([]poolEntry{cp1})
	require.True(t, errors.As(err, &rb), "%v", err)
	assert.Empty(t, e.committed())
}

// olderBroker makes a client speak as to Kafka 3.9 (no KIP-890 part 2).
func olderBroker() []kgo.Opt { return []kgo.Opt{kgo.MaxVersions(kversion.V3_9_0())} }

// TestCommitWithLostAnswer: the producer's EndTxn never reaches the
// coordinator (the connection drops); the writer asks the broker for the
// outcome, which commits the transaction, and goes on with a new producer.
func TestCommitWithLostAnswer(t *testing.T) {
	e := newWriterEnv(t)
	w := e.writer("lost", franzConfig{extra: []kgo.Opt{kgo.RequestRetries(0)}})
	require.NoError(t, w.Start())
	writeRange(t, w, 1, 10)
	_, err := w.PreCommit(1)
	require.NoError(t, err)
	e.b.Cluster().ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		return nil, errors.New("dropped"), true // once: the next EndTxn is handled
	})
	require.NoError(t, w.Commit(1))
	writeRange(t, w, 11, 20)
	_, err = w.PreCommit(2)
	require.NoError(t, err)
	require.NoError(t, w.Commit(2))
	requireOnce(t, e.committed(), 1, 20)
}

// TestDecideOutcome: what a read_committed reader started at a
// transaction's first record gets first says how it ended.
func TestDecideOutcome(t *testing.T) {
	cm := committable{ID: "p-0-0", ProducerID: 7, Topic: "out"}
	at := partitionOffset{Partition: 1, Offset: 40}
	o, err := decideOutcome(cm, at, firstSeen{Offset: 40, Producer: 7})
	require.NoError(t, err)
	assert.Equal(t, outcomeCommitted, o, "its own first record: committed")
	o, err = decideOutcome(cm, at, firstSeen{Offset: 52, Producer: 7})
	require.NoError(t, err)
	assert.Equal(t, outcomeAborted, o, "a later record or marker first, with or without a marker of its own: aborted")
	_, err = decideOutcome(cm, at, firstSeen{Offset: 40, Producer: 9})
	assert.ErrorIs(t, err, errOutcomeUnknown, "another producer's record at its offset")
}

// TestStallIsAProblem: a commit or restore that waits on the brokers past
// stallAfter is an info problem naming what waits, cleared when it ends.
func TestStallIsAProblem(t *testing.T) {
	m := &runtime.Metrics{}
	s := &txnSink{cfg: sinkConfig{brokers: []string{"b:9092"}, deliveryTimeout: 4 * time.Second},
		ctx: runtime.NewContext(runtime.ContextOptions{Metrics: m})}
	end := s.watchStall("committing the kafka transactions of checkpoint 7")
	assert.Empty(t, m.Problems(), "not before stallAfter")
	require.Eventually(t, func() bool { return len(m.Problems()) == 1 }, 2*stallAfter, 10*time.Millisecond)
	assert.Contains(t, m.Problems()[0], "checkpoint 7")
	assert.Contains(t, m.Problems()[0], "deliveryTimeout 4s")
	end()
	assert.Empty(t, m.Problems())
}
