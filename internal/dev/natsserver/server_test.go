package natsserver_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func start(t *testing.T, cfg natsserver.Config) *natsserver.Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	s, err := natsserver.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

func TestParseStream(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want natsserver.Stream
		err  string
	}{
		{in: "orders", want: natsserver.Stream{Name: "orders"}},
		{in: "orders:orders.*,audit.>", want: natsserver.Stream{Name: "orders", Subjects: []string{"orders.*", "audit.>"}}},
		{in: "", err: "empty stream name"},
		{in: "a.b:x", err: "must not contain"},
		{in: "s:x..y", err: "bad subject"},
		{in: "s:", err: "bad subject"},
	} {
		got, err := natsserver.ParseStream(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	s, _ := natsserver.ParseStream("orders")
	require.Equal(t, "orders:orders", s.String())
}

// stream opens a stream through a connection closed when the test ends.
func stream(t *testing.T, url, name string) jetstream.Stream {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(context.Background(), name)
	require.NoError(t, err)
	return st
}

func streamInfo(t *testing.T, url, name string) *jetstream.StreamInfo {
	t.Helper()
	info, err := stream(t, url, name).Info(context.Background())
	require.NoError(t, err)
	return info
}

func TestProduceSequence(t *testing.T) {
	s := start(t, natsserver.Config{Streams: []natsserver.Stream{{Name: "seq", Subjects: []string{"seq.in"}}}})
	var calls int
	sent, err := natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL(), Subject: "seq.in", Start: 5, Count: 2500,
		Progress: func(sent, last int64) { calls++; require.Equal(t, 5+sent-1, last) }})
	require.NoError(t, err)
	require.Equal(t, int64(2500), sent)
	require.Positive(t, calls)
	info := streamInfo(t, s.URL(), "seq")
	require.Equal(t, uint64(2500), info.State.Msgs)

	nc, err := nats.Connect(s.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, _ := js.Stream(context.Background(), "seq")
	for _, seq := range []uint64{1, 2500} {
		m, err := st.GetMsg(context.Background(), seq)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf(`{"idx": %d}`, int64(seq)+4), string(m.Data))
	}
}

func TestProduceRateAndCancel(t *testing.T) {
	s := start(t, natsserver.Config{Streams: []natsserver.Stream{{Name: "r"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	sent, err := natsserver.Produce(ctx, natsserver.ProduceConfig{URL: s.URL(), Subject: "r", Rate: 1000})
	require.NoError(t, err)
	require.InDelta(t, 300, sent, 120, "about rate × time")
	require.Less(t, time.Since(began), 2*time.Second)
	require.Equal(t, uint64(sent), streamInfo(t, s.URL(), "r").State.Msgs, "sent counts exactly what was stored")
}

func TestProduceErrors(t *testing.T) {
	s := start(t, natsserver.Config{})
	_, err := natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL(), Subject: "nowhere", Count: 1})
	require.ErrorContains(t, err, `no stream captures subject "nowhere"`)
	_, err = natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL()})
	require.ErrorContains(t, err, "no subject")
}

func TestPersistentStoreSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := natsserver.Config{Listen: "127.0.0.1:0", StoreDir: dir, Streams: []natsserver.Stream{{Name: "p", Subjects: []string{"p.>"}}}}
	s, err := natsserver.Start(cfg)
	require.NoError(t, err)
	_, err = natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL(), Subject: "p.x", Count: 10})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "idempotent")

	s = start(t, cfg)
	require.Equal(t, uint64(10), streamInfo(t, s.URL(), "p").State.Msgs)
}

func TestListenInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, err = natsserver.Start(natsserver.Config{Listen: ln.Addr().String()})
	require.Error(t, err)
	_, err = natsserver.Start(natsserver.Config{Listen: "nonsense"})
	require.ErrorContains(t, err, "listen")
}
