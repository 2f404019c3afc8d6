package kafka_test

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const waitFor = 30 * time.Second

// startBroker starts an in-process broker with topics "name:partitions".
func startBroker(t testing.TB, topics ...string) *kafkabroker.Broker {
	t.Helper()
	return startBrokerWith(t, kafkabroker.Config{Listen: "127.0.0.1:0"}, topics...)
}

func startBrokerWith(t testing.TB, cfg kafkabroker.Config, topics ...string) *kafkabroker.Broker {
	t.Helper()
	for _, s := range topics {
		tp, err := kafkabroker.ParseTopic(s)
		require.NoError(t, err)
		cfg.Topics = append(cfg.Topics, tp)
	}
	b, err := kafkabroker.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	return b
}

// produceIdx writes {"idx": start} … {"idx": start+n-1} round robin over
// the partitions of topic.
func produceIdx(t testing.TB, addr, topic string, start, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	sent, err := produce.Run(ctx, produce.Config{Brokers: []string{addr}, Topic: topic, Start: start, Count: n})
	require.NoError(t, err)
	require.Equal(t, n, sent)
}

// produceTo writes values (with keys, if given as "key=value") to one partition.
func produceTo(t testing.TB, addr, topic string, partition int, values ...string) {
	t.Helper()
	msgs := make([]kafka.Message, len(values))
	for i, v := range values {
		if k, val, ok := strings.Cut(v, "="); ok {
			msgs[i] = kafka.Message{Key: []byte(k), Value: []byte(val)}
		} else {
			msgs[i] = kafka.Message{Value: []byte(v)}
		}
	}
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Transport: tr, BatchTimeout: time.Millisecond,
		RequiredAcks: kafka.RequireAll, BatchSize: 10_000,
		Balancer: kafka.BalancerFunc(func(kafka.Message, ...int) int { return partition })}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, w.WriteMessages(ctx, msgs...))
	require.NoError(t, w.Close())
}

// readTopic reads every record of every partition of topic (up to the end
// offsets at the time of the call).
func readTopic(t testing.TB, addr, topic string) []kafka.Message {
	t.Helper()
	conn, err := kafka.Dial("tcp", addr)
	require.NoError(t, err)
	parts, err := conn.ReadPartitions(topic)
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	var out []kafka.Message
	for _, p := range parts {
		out = append(out, readPartition(t, addr, topic, p.ID)...)
	}
	return out
}

func readPartition(t testing.TB, addr, topic string, partition int) []kafka.Message {
	t.Helper()
	conn, err := kafka.DialLeader(context.Background(), "tcp", addr, topic, partition)
	require.NoError(t, err)
	defer conn.Close()
	first, last, err := conn.ReadOffsets()
	require.NoError(t, err)
	_, err = conn.Seek(first, kafka.SeekAbsolute)
	require.NoError(t, err)
	var out []kafka.Message
	for next := first; next < last; {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		b := conn.ReadBatch(1, 10<<20)
		for {
			m, err := b.ReadMessage()
			if err != nil {
				break
			}
			out = append(out, m)
			next = m.Offset + 1
		}
		require.NoError(t, b.Close())
	}
	return out
}

func client(t testing.TB, addr string) *kafka.Client {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(addr), Transport: tr, Timeout: 10 * time.Second}
}

// committed returns the offsets group committed for partitions 0..n-1 of
// topic (-1: none).
func committed(t testing.TB, addr, group, topic string, n int) []int64 {
	t.Helper()
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	resp, err := client(t, addr).OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{
		GroupID: group, Topics: map[string][]int{topic: parts}})
	require.NoError(t, err)
	out := make([]int64, n)
	for i := range out {
		out[i] = -1
	}
	if resp.Error != nil {
		return out
	}
	for _, p := range resp.Topics[topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out
}

var idxPattern = regexp.MustCompile(`^\{"idx": (\d+)\}$`)

// idxs parses collected {"idx": N} values.
func idxs(t testing.TB, vals []string) []int64 {
	t.Helper()
	out := make([]int64, len(vals))
	for i, v := range vals {
		m := idxPattern.FindStringSubmatch(v)
		require.NotNil(t, m, "unexpected value %q", v)
		out[i], _ = strconv.ParseInt(m[1], 10, 64)
	}
	return out
}

// requireExactly checks that got holds every idx of [from, to] exactly once.
func requireExactly(t testing.TB, got []int64, from, to int64) {
	t.Helper()
	count := map[int64]int{}
	for _, v := range got {
		count[v]++
	}
	var missing, dup, unexpected []int64
	for i := from; i <= to; i++ {
		switch count[i] {
		case 0:
			missing = append(missing, i)
		case 1:
		default:
			dup = append(dup, i)
		}
	}
	for v := range count {
		if v < from || v > to {
			unexpected = append(unexpected, v)
		}
	}
	sort.Slice(unexpected, func(i, j int) bool { return unexpected[i] < unexpected[j] })
	require.True(t, len(missing)+len(dup)+len(unexpected) == 0,
		"%d records, want %d..%d exactly once: missing %s, duplicated %s, unexpected %s",
		len(got), from, to, summary(missing), summary(dup), summary(unexpected))
}

func summary(v []int64) string {
	if len(v) > 10 {
		return fmt.Sprintf("%v… (%d)", v[:10], len(v))
	}
	return fmt.Sprint(v)
}

// operator returns the info of operator uid.
func operator(t testing.TB, j *engine.Job, uid string) api.OperatorInfo {
	t.Helper()
	for _, op := range j.Info().Operators {
		if op.UID == uid {
			return op
		}
	}
	t.Fatalf("no operator %q", uid)
	return api.OperatorInfo{}
}

func compileSpec(spec string) (*engine.Graph, error) {
	return engine.Compile(testRegistry, "test.yaml", []byte(spec), engine.Defaults{})
}

// startLogged is runtimetest.Start with the job's log written to w (JSON
// lines), for tests that check what the connector logs.
func startLogged(t testing.TB, spec string, o runtimetest.Options, w io.Writer) *engine.Job {
	t.Helper()
	g, err := compileSpec(spec)
	require.NoError(t, err)
	var restore *engine.Restore
	if o.Restore != "" {
		restore, err = engine.LoadRestore(vfs.Default, o.Restore)
		require.NoError(t, err)
	}
	return engine.StartJob(engine.JobOptions{ID: fmt.Sprintf("test%d", time.Now().UnixNano()), Graph: g,
		Env: &engine.Env{FS: vfs.Default, Faults: o.Faults}, Log: zerolog.New(w), CheckpointsDir: o.CheckpointsDir,
		SavepointsDir: o.SavepointsDir, Restore: restore})
}

// syncBuffer is a log sink safe for the job's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testTypes are the operator types the tests' specs use.
var testTypes = all.Definitions()

// testRegistry holds testTypes and the test operators of runtimetest.
var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), testTypes)...)
