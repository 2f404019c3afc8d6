package nats_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const waitFor = 30 * time.Second

// startServer starts an in-process NATS server with JetStream and the
// streams "name:subjects".
func startServer(t testing.TB, streams ...string) *natsserver.Server {
	t.Helper()
	cfg := natsserver.Config{Listen: "127.0.0.1:0"}
	for _, s := range streams {
		st, err := natsserver.ParseStream(s)
		require.NoError(t, err)
		cfg.Streams = append(cfg.Streams, st)
	}
	s, err := natsserver.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// produceIdx publishes {"idx": start} … {"idx": start+n-1} to subject.
func produceIdx(t testing.TB, url, subject string, start, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	sent, err := natsserver.Produce(ctx, natsserver.ProduceConfig{URL: url, Subject: subject, Start: start, Count: n})
	require.NoError(t, err)
	require.Equal(t, n, sent)
}

// client is a plain connection for observing the server side.
type client struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func connect(t testing.TB, url string) *client {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return &client{nc: nc, js: js}
}

// waitConsumer waits until the job created the durable.
func (c *client) waitConsumer(t testing.TB, stream, durable string) {
	t.Helper()
	runtimetest.WaitUntil(t, waitFor, "consumer "+durable, func() bool {
		_, err := c.js.Consumer(context.Background(), stream, durable)
		return err == nil
	})
}

// consumer returns the durable's info (server side).
func (c *client) consumer(t testing.TB, stream, durable string) *jetstream.ConsumerInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.js.Consumer(ctx, stream, durable)
	require.NoError(t, err)
	ci, err := info.Info(ctx)
	require.NoError(t, err)
	return ci
}

// streamMsgs returns the payloads stored in stream, in order.
func (c *client) streamMsgs(t testing.TB, stream string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	st, err := c.js.Stream(ctx, stream)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	var out []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		require.NoError(t, err)
		out = append(out, string(m.Data))
	}
	return out
}

// ackSpy counts the acknowledgements sent to a consumer, as the server
// sees them: it subscribes to the consumer's ack subjects.
type ackSpy struct {
	mu     sync.Mutex
	counts map[string]int // payload → count
	times  []time.Time    // of each +ACK
}

func spyAcks(t testing.TB, c *client, stream, durable string) *ackSpy {
	t.Helper()
	s := &ackSpy{counts: map[string]int{}}
	sub, err := c.nc.Subscribe(fmt.Sprintf("$JS.ACK.%s.%s.>", stream, durable), func(m *nats.Msg) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.counts[string(m.Data)]++
		if string(m.Data) == "+ACK" {
			s.times = append(s.times, time.Now())
		}
	})
	require.NoError(t, err)
	require.NoError(t, sub.SetPendingLimits(-1, -1))
	require.NoError(t, c.nc.Flush())
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return s
}

func (s *ackSpy) count(payload string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[payload]
}

func (s *ackSpy) ackTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
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

// tally is what a run delivered of the sequence from..to.
type tally struct {
	missing, duplicates, unexpected []int64
	extra                           int // deliveries beyond the first, in all
}

func count(got []int64, from, to int64) tally {
	seen := map[int64]int{}
	for _, v := range got {
		seen[v]++
	}
	var r tally
	for i := from; i <= to; i++ {
		switch n := seen[i]; {
		case n == 0:
			r.missing = append(r.missing, i)
		case n > 1:
			r.duplicates = append(r.duplicates, i)
			r.extra += n - 1
		}
	}
	for v := range seen {
		if v < from || v > to {
			r.unexpected = append(r.unexpected, v)
		}
	}
	sort.Slice(r.unexpected, func(i, j int) bool { return r.unexpected[i] < r.unexpected[j] })
	return r
}

func (r tally) String() string {
	return fmt.Sprintf("missing %s, duplicated %s (%d extra deliveries), unexpected %s",
		summary(r.missing), summary(r.duplicates), r.extra, summary(r.unexpected))
}

// requireExactly checks that got holds every idx of [from, to] exactly once.
func requireExactly(t testing.TB, got []int64, from, to int64) {
	t.Helper()
	r := count(got, from, to)
	require.True(t, len(r.missing)+len(r.duplicates)+len(r.unexpected) == 0,
		"%d records, want %d..%d exactly once: %s", len(got), from, to, r)
}

func summary(v []int64) string {
	if len(v) > 10 {
		return fmt.Sprintf("%v… (%d)", v[:10], len(v))
	}
	return fmt.Sprint(v)
}

// waitDistinct waits until the collector holds every idx of 1..n.
func waitDistinct(t testing.TB, name string, n int64) {
	t.Helper()
	runtimetest.WaitUntil(t, waitFor, fmt.Sprintf("idx 1..%d collected in %s", n, name), func() bool {
		return len(count(idxs(t, runtimetest.Values(name)), 1, n).missing) == 0
	})
}

// gauge returns the summed gauge of operator uid.
func gauge(j *engine.Job, uid, name string) int64 {
	for _, op := range j.Info().Operators {
		if op.UID == uid {
			return op.Metrics[name]
		}
	}
	return 0
}

func compileSpec(spec string) (*engine.Graph, error) {
	return engine.Compile(testRegistry, "test.yaml", []byte(spec), engine.Defaults{})
}

// testTypes are the operator types the tests' specs use.
var testTypes = all.Definitions()

// testRegistry holds testTypes and the test operators of runtimetest.
var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), testTypes)...)
