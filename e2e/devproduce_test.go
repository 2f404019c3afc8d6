package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// topicMessages reads every message of a topic's partitions.
func topicMessages(t *testing.T, addr, topic string, partitions int) [][]kafka.Message {
	t.Helper()
	out := make([][]kafka.Message, partitions)
	for p := range partitions {
		conn, err := kafka.DialLeader(context.Background(), "tcp", addr, topic, p)
		require.NoError(t, err)
		last, err := conn.ReadLastOffset()
		require.NoError(t, err)
		_ = conn.Close()
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: p, MaxWait: 200 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for range last {
			m, err := r.FetchMessage(ctx)
			require.NoError(t, err)
			out[p] = append(out[p], m)
		}
		cancel()
		require.NoError(t, r.Close())
	}
	return out
}

// finishedLines returns the lines of a file sink's finished files, sorted.
func finishedLines(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		return sc.Err()
	})
	require.NoError(t, err)
	slices.Sort(lines)
	return lines
}

// dev produce --expr/--key-expr through the binary: the records are the
// expression's, keyed and partitioned by key; a bad expression or option
// is a usage error (exit 2) and writes nothing.
func TestDevProduceExpression(t *testing.T) {
	parallel(t)
	b := broker(t, "shaped", 2)
	e := newEnv(t)
	r := e.run("dev", "produce", "--brokers", b.Addr(), "--topic", "shaped", "--count", "500", "--rate", "0",
		"--expr", `{"user": "u" + string(idx % 10), "amount": idx % 7, "ts": 1767225600000 + idx * 10}`,
		"--key-expr", `"u" + string(idx % 10)`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "500 records sent, idx 1..500\n", r.stdout)
	got := map[string]string{}
	for _, msgs := range topicMessages(t, b.Addr(), "shaped", 2) {
		for _, m := range msgs {
			got[string(m.Value)] = string(m.Key)
		}
	}
	require.Len(t, got, 500)
	for idx := 1; idx <= 500; idx++ {
		v := fmt.Sprintf(`{"amount":%d,"ts":%d,"user":"u%d"}`, idx%7, 1767225600000+idx*10, idx%10)
		require.Equal(t, fmt.Sprintf("u%d", idx%10), got[v], v)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--expr", `"u" + idx`}, `--expr "\"u\" + idx": invalid operation: + (mismatched types string and int)`},
		{[]string{"--expr", `{"a": nope}`}, `unknown name nope`},
		{[]string{"--expr", `string(10 % (idx - 1))`}, `at idx 1: runtime error: integer divide by zero`},
		{[]string{"--key-expr", `idx +`}, `--key-expr "idx +"`},
		{[]string{"--seed", "3"}, `--seed is an option of --events`},
		{[]string{"--events", "--out-of-orderness", "1500us"}, `--out-of-orderness: must be a whole number of milliseconds`},
		{[]string{"--events", "--late-every", "10"}, `--late-by: must be set with lateEvery`},
	} {
		r := e.run(append([]string{"dev", "produce", "--brokers", b.Addr(), "--topic", "shaped", "--count", "5"}, c.args...)...)
		require.Equal(t, 2, r.code, "%v: %s%s", c.args, r.stdout, r.stderr)
		require.Contains(t, r.stderr, c.want, c.args)
	}
	after := topicMessages(t, b.Addr(), "shaped", 2)
	require.Equal(t, 500, len(after[0])+len(after[1]), "the refused runs wrote nothing")

	n := natsserver.Config{Listen: "127.0.0.1:0", Streams: []natsserver.Stream{{Name: "s", Subjects: []string{"s.in"}}}}
	srv, err := natsserver.Start(n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	r = e.run("dev", "produce", "--nats", srv.URL(), "--subject", "s.in", "--count", "5", "--expr", "nope")
	require.Equal(t, 2, r.code, r.stderr)
	r = e.run("dev", "produce", "--nats", srv.URL(), "--subject", "s.in", "--count", "5", "--key-expr", "idx")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "a key expression is for Kafka")
	r = e.run("dev", "produce", "--nats", srv.URL(), "--subject", "s.in", "--count", "300", "--rate", "0", "--expr", `"line " + string(idx)`)
	require.Equal(t, 0, r.code, r.stderr)
	nc, err := nats.Connect(srv.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(context.Background(), "s")
	require.NoError(t, err)
	info, err := st.Info(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(300), info.State.Msgs, "only the last run published")
	for _, seq := range []uint64{1, 300} {
		m, err := st.GetMsg(context.Background(), seq)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("line %d", seq), string(m.Data))
	}
}

// dev produce --events feeds a Kafka job exactly what a datagen job with
// the same options emits: the same values with the same timestamps (the
// Kafka timestamp is the event time), compared through two real jobs'
// finished files, and computed independently from datagen.Events.
func TestDevProduceEventsEqualsDatagen(t *testing.T) {
	parallel(t)
	const n = 3000
	opts := []string{"--keys", "13", "--out-of-orderness", "2s", "--late-every", "97", "--late-by", "1m", "--seed", "42"}
	b := broker(t, "events", 3)
	e := newEnv(t)
	r := e.run(append([]string{"dev", "produce", "--brokers", b.Addr(), "--topic", "events", "--count", fmt.Sprint(n), "--rate", "0", "--events"}, opts...)...)
	require.Equal(t, 0, r.code, r.stderr)

	e.startDaemon()
	stamp := `{uid: stamp, type: map, from: [in], expr: 'value + " @" + string(timestamp)'}`
	sink := func(out string) string {
		return fmt.Sprintf(`{uid: out, type: file, from: [stamp], path: %s, bucket: none, rolling: {onCheckpoint: true}}`, out)
	}
	kafkaOut, genOut := filepath.Join(e.home, "kafka-out"), filepath.Join(e.home, "datagen-out")
	k := e.mustRun("run", e.writeSpec("k.yaml", fmt.Sprintf(`
name: kafka-events
parallelism: 2
checkpointing: {interval: 200ms}
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: events, groupId: e2e, format: json, bounded: latest}
  - %s
  - %s
`, b.Addr(), stamp, sink(kafkaOut))))
	g := e.mustRun("run", e.writeSpec("g.yaml", fmt.Sprintf(`
name: datagen-events
parallelism: 3
checkpointing: {interval: 200ms}
operators:
  - {uid: in, type: datagen, count: %d, format: events, keys: 13, outOfOrderness: 2s, lateEvery: 97, lateBy: 1m, seed: 42}
  - %s
  - %s
`, n, stamp, sink(genOut))))
	e.waitState(k, api.StateFinished, 60*time.Second)
	e.waitState(g, api.StateFinished, 60*time.Second)

	o := datagen.DefaultEventOptions()
	o.Keys, o.OutOfOrderness, o.LateEvery, o.LateBy, o.Seed = 13, 2*time.Second, 97, time.Minute, 42
	gen, err := datagen.NewEvents(o)
	require.NoError(t, err)
	want := make([]string, 0, n)
	for idx := int64(1); idx <= n; idx++ {
		ev := gen.At(idx)
		want = append(want, fmt.Sprintf("%s @%d", gen.Append(nil, ev), ev.TS))
	}
	slices.Sort(want)
	require.Equal(t, want, finishedLines(t, genOut), "datagen job")
	require.Equal(t, want, finishedLines(t, kafkaOut), "Kafka job fed by dev produce --events")
}
