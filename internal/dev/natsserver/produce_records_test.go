package natsserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/dev/payload"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// messages returns the data of messages 1..n of a stream.
func messages(t *testing.T, url, name string, n int) []string {
	t.Helper()
	st := stream(t, url, name)
	out := make([]string, 0, n)
	for seq := 1; seq <= n; seq++ {
		m, err := st.GetMsg(context.Background(), uint64(seq))
		require.NoError(t, err)
		out = append(out, string(m.Data))
	}
	return out
}

func TestProduceExpressionAndEvents(t *testing.T) {
	s := start(t, natsserver.Config{Streams: []natsserver.Stream{{Name: "x", Subjects: []string{"x.in"}}, {Name: "ev", Subjects: []string{"ev.in"}}}})
	recs, err := payload.New(payload.Options{Expr: `{"user": "u" + string(idx % 100), "amount": idx % 7, "ts": 1767225600000 + idx * 10}`})
	require.NoError(t, err)
	sent, err := natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL(), Subject: "x.in", Start: 1, Count: 2500, Records: recs})
	require.NoError(t, err)
	require.Equal(t, int64(2500), sent)
	got := messages(t, s.URL(), "x", 2500)
	require.Equal(t, `{"amount":1,"ts":1767225600010,"user":"u1"}`, got[0])
	require.Equal(t, `{"amount":1,"ts":1767225625000,"user":"u0"}`, got[2499], "in idx order")

	o := datagen.DefaultEventOptions()
	o.OutOfOrderness, o.Seed = time.Second, 3
	g, err := datagen.NewEvents(o)
	require.NoError(t, err)
	recs, err = payload.New(payload.Options{Events: &o})
	require.NoError(t, err)
	sent, err = natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL(), Subject: "ev.in", Start: 10, Count: 1200, Records: recs})
	require.NoError(t, err)
	require.Equal(t, int64(1200), sent)
	for i, v := range messages(t, s.URL(), "ev", 1200) {
		require.Equal(t, string(g.Append(nil, g.At(int64(10+i)))), v)
	}
}

// An expression failing at some idx stops Produce there: the messages
// before it are stored and counted (chunks of 1000), nothing after.
func TestProduceExpressionFailsMidway(t *testing.T) {
	s := start(t, natsserver.Config{Streams: []natsserver.Stream{{Name: "f", Subjects: []string{"f.in"}}}})
	recs, err := payload.New(payload.Options{Expr: `string(10 % (idx - 2500))`, First: 1})
	require.NoError(t, err)
	sent, err := natsserver.Produce(context.Background(), natsserver.ProduceConfig{URL: s.URL(), Subject: "f.in", Count: 5000, Records: recs})
	require.ErrorIs(t, err, payload.ErrExpr)
	require.ErrorContains(t, err, "at idx 2500")
	require.Equal(t, int64(2499), sent)
	require.Equal(t, uint64(2499), streamInfo(t, s.URL(), "f").State.Msgs)
}

func TestProduceRefusesKeys(t *testing.T) {
	recs, err := payload.New(payload.Options{KeyExpr: `"k"`})
	require.NoError(t, err)
	cfg := natsserver.ProduceConfig{URL: "nats://127.0.0.1:1", Subject: "s", Records: recs}
	require.ErrorContains(t, cfg.Validate(), "a key expression is for Kafka")
}
