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
	"github.com/twmb/franz-go/pkg/kerr"
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

// records reads out with an independent reader.
func (e *writerEnv) records(readCommitted bool) []consume.Record {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []consume.Record
	_, err := consume.Kafka(ctx, consume.KafkaConfig{Brokers: []string{e.b.Addr()}, Topic: "out", ReadCommitted: readCommitted},
		func(r consume.Record) error {
			out = append(out, r)
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
	require.Error(t, err)
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

// TestAbortedTransactionIsWrittenAgain: a pre-committed transaction the
// broker aborts (its timeout passed) fails its commit; the restore of the
// snapshot naming it reads its records back from the topic and writes
// them again into its open transaction, committed with the next
// checkpoint. Restored twice before that checkpoint (the first restore
// failed over), the records are still committed once: the second
// restore's fence aborts the first one's rewrite. Each record keeps its
// key, timestamp and partition; the records after it are partitioned as
// ever.
func TestAbortedTransactionIsWrittenAgain(t *testing.T) {
	e := newWriterEnv(t)
	w := e.writer("exp", franzConfig{transactionTimeout: 300 * time.Millisecond})
	require.NoError(t, w.Start())
	for i := 1; i <= 10; i++ {
		v := []byte(strconv.Itoa(i))
		require.NoError(t, w.Write(v, v, int64(1000*i)))
	}
	cp1, err := w.PreCommit(1)
	require.NoError(t, err)
	time.Sleep(time.Second)
	err = w.Commit(1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was aborted by the broker before it could be committed")
	var rb *runtime.RestoreBeforeError
	assert.False(t, errors.As(err, &rb), "the checkpoint naming it is restored, not the one before: %v", err)
	assert.Equal(t, int64(1), w.Stats().Aborted)

	first := e.writer("exp")
	require.NoError(t, first.Restore([]poolEntry{cp1}))
	assert.Equal(t, int64(1), first.Stats().Rewritten)
	cp2, err := first.PreCommit(2)
	require.NoError(t, err)
	require.Len(t, cp2.Pending, 1, "the rewrite is pending in the next snapshot")
	assert.Equal(t, int64(10), cp2.Pending[0].Records)
	assert.Empty(t, e.committed(), "not committed before a checkpoint names it")
	first.Close() // fails over before checkpoint 2 completes

	second := e.writer("exp")
	require.NoError(t, second.Restore([]poolEntry{cp1}))
	for i := 11; i <= 20; i++ {
		v := []byte(strconv.Itoa(i))
		require.NoError(t, second.Write(v, v, 0))
	}
	cp2, err = second.PreCommit(2)
	require.NoError(t, err)
	require.Len(t, cp2.Pending, 1, "one transaction: the rewrite and what follows")
	assert.Equal(t, int64(20), cp2.Pending[0].Records)
	require.NoError(t, second.Commit(2))
	requireOnce(t, e.committed(), 1, 20)
	aborted := map[string]consume.Record{} // the first copy of each value: the aborted one
	for _, r := range e.records(false) {
		if _, ok := aborted[string(r.Value)]; !ok {
			aborted[string(r.Value)] = r
		}
	}
	rewritten := 0
	for _, r := range e.records(true) {
		if a := aborted[string(r.Value)]; a.Offset < r.Offset {
			rewritten++
			assert.Equal(t, []any{a.Partition, string(a.Key), a.Timestamp.UnixMilli()}, []any{r.Partition, string(r.Key), r.Timestamp.UnixMilli()}, "value %s", r.Value)
		}
	}
	assert.Equal(t, 10, rewritten)
	partitions := map[int32]bool{} // of the records after the rewrite, by key
	for _, r := range e.records(true) {
		if n, _ := strconv.Atoi(string(r.Key)); n > 10 {
			partitions[r.Partition] = true
		}
	}
	assert.Len(t, partitions, 2, "keys 11..20 spread over both partitions, not pinned to one")

	// A snapshot naming the transaction with the rewrite restores like
	// any other: committed already, nothing written again.
	third := e.writer("exp")
	require.NoError(t, third.Restore([]poolEntry{cp2}))
	assert.Equal(t, int64(1), third.Stats().Recommitted)
	requireOnce(t, e.committed(), 1, 20)
}

// TestAbortedTransactionWithRecordsGone: when some of the aborted
// transaction's records are no longer in the topic (retention deleted
// those of one partition; its outcome is still read in the other), the
// restore cannot write them again: it is a RestoreBeforeError naming the
// transaction's checkpoint, so the job replays from the snapshot before.
// (With its first record gone too, the outcome is unknown: the restore
// fails and asks again.)
func TestAbortedTransactionWithRecordsGone(t *testing.T) {
	e := newWriterEnv(t)
	w := e.writer("gone", franzConfig{transactionTimeout: 300 * time.Millisecond})
	require.NoError(t, w.Start())
	for i := range 10 {
		k := []byte(strconv.Itoa(i))
		require.NoError(t, w.Write(k, k, 0))
	}
	cp1, err := w.PreCommit(1)
	require.NoError(t, err)
	require.Len(t, cp1.Pending[0].First, 2, "the keys spread the records over both partitions")
	time.Sleep(time.Second) // the broker aborts it
	deleteAll(t, e.b.Addr(), "out", cp1.Pending[0].First[1].Partition)
	r := e.writer("gone")
	err = r.Restore([]poolEntry{cp1})
	var rb *runtime.RestoreBeforeError
	require.ErrorAs(t, err, &rb, "%v", err)
	assert.Equal(t, int64(1), rb.Checkpoint)
	assert.ErrorIs(t, err, errRecordsGone)
	assert.Contains(t, err.Error(), "10 records")
	assert.Contains(t, err.Error(), "cannot be written again")
	assert.Empty(t, e.committed())
}

// deleteAll deletes every record of a partition of topic (DeleteRecords
// up to the high watermark), as retention would.
func deleteAll(t *testing.T, addr, topic string, partition int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = partition, -1 // -1: up to the high watermark
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	for _, sh := range cl.RequestSharded(ctx, req) {
		require.NoError(t, sh.Err)
		for _, t2 := range sh.Resp.(*kmsg.DeleteRecordsResponse).Topics {
			for _, p := range t2.Partitions {
				require.NoError(t, kerr.ErrorForCode(p.ErrorCode), "partition %d", p.Partition)
			}
		}
	}
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
