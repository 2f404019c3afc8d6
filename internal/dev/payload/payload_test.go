package payload

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/sequence"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// record returns record idx of m as key, value and timestamp.
func record(t *testing.T, m *Maker, idx int64) (string, string, int64) {
	t.Helper()
	buf, keyLen, ts, err := m.Append([]byte("prefix"), idx)
	require.NoError(t, err)
	buf = buf[len("prefix"):]
	return string(buf[:keyLen]), string(buf[keyLen:]), ts
}

func mustNew(t *testing.T, o Options) *Maker {
	t.Helper()
	m, err := New(o)
	require.NoError(t, err)
	return m
}

func TestDefaultIsTheDemoSequence(t *testing.T) {
	m := mustNew(t, Options{})
	require.False(t, m.HasKey())
	require.False(t, m.HasTime())
	for _, idx := range []int64{1, 42, -3} {
		k, v, ts := record(t, m, idx)
		require.Equal(t, "", k)
		require.Equal(t, string(sequence.AppendRecord(nil, idx)), v)
		require.Zero(t, ts, "the broker's time")
	}
}

// --events writes the bytes a datagen events source emits, with its ts.
func TestEventsAreDatagens(t *testing.T) {
	o := datagen.DefaultEventOptions()
	o.OutOfOrderness, o.LateEvery, o.LateBy, o.Seed = 3*time.Second, 10, time.Minute, 5
	g, err := datagen.NewEvents(o)
	require.NoError(t, err)
	m := mustNew(t, Options{Events: &o})
	require.True(t, m.HasTime())
	for idx := int64(1); idx < 200; idx++ {
		_, v, ts := record(t, m, idx)
		e := g.At(idx)
		require.Equal(t, string(g.Append(nil, e)), v)
		require.Equal(t, e.TS, ts)
	}
	m = mustNew(t, Options{Events: &o, Expr: `{"who": user, "cents": amount * 100, "at": ts, "late": late}`, KeyExpr: "user"})
	e := g.At(20)
	k, v, ts := record(t, m, 20)
	require.Equal(t, g.User(e), k)
	require.JSONEq(t, `{"who": "`+g.User(e)+`", "cents": `+itoa(e.Amount*100)+`, "at": `+itoa(e.TS)+`, "late": true}`, v)
	require.Equal(t, e.TS, ts, "the event's time, whatever the value")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestExpressions(t *testing.T) {
	m := mustNew(t, Options{Expr: `{"user": "u" + string(idx % 100), "amount": idx % 7, "ts": 1767225600000 + idx * 10}`, KeyExpr: `"u" + string(idx % 100)`})
	require.True(t, m.HasKey())
	k, v, ts := record(t, m, 1234)
	require.Equal(t, "u34", k)
	require.Equal(t, `{"amount":2,"ts":1767225612340,"user":"u34"}`, v, "JSON with sorted keys, as map writes")
	require.Zero(t, ts)

	for src, want := range map[string]string{
		`"line " + string(idx)`:         "line 1234",
		`idx * 2`:                       "2468",
		`idx % 10 == 4`:                 "true",
		`[idx, idx + 1]`:                "[1234,1235]",
		`hash(idx) % 1000`:              itoa(datagen.Hash(1234) % 1000),
		`idx % 100 == 34 ? -1 : idx`:    "-1",
		`{"s": "quote \" and \\ done"}`: `{"s":"quote \" and \\ done"}`,
	} {
		_, v, _ := record(t, mustNew(t, Options{Expr: src}), 1234)
		require.Equal(t, want, v, src)
	}
	require.NotEqual(t, datagen.Hash(1), datagen.Hash(2))
	require.GreaterOrEqual(t, datagen.Hash(-7), int64(0))
}

// Bad expressions are refused by New, before anything is sent: syntax,
// unknown names (the event's fields only with --events), type errors, and
// a failure on the first idx.
func TestBadExpressions(t *testing.T) {
	ev := datagen.DefaultEventOptions()
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Expr: `{"a": 1`}, `bad expression: --expr "{\"a\": 1": unexpected token EOF (1:7)`},
		{Options{Expr: `nope + 1`}, `--expr "nope + 1": unknown name nope (1:1)`},
		{Options{Expr: `user`}, `--expr "user": unknown name user`},
		{Options{Expr: `"u" + idx`}, `invalid operation: + (mismatched types string and int)`},
		{Options{KeyExpr: `idx +`}, `--key-expr "idx +"`},
		{Options{Expr: `10 % (idx - 1)`, First: 1}, `--expr "10 % (idx - 1)" at idx 1: runtime error: integer divide by zero`},
		{Options{Events: &datagen.EventOptions{}}, `keys: must be at least 1, got 0`},
	} {
		_, err := New(c.o)
		require.ErrorContains(t, err, c.want, "%+v", c.o)
	}
	_, err := New(Options{Expr: `amount`, Events: &ev})
	require.NoError(t, err, "the event's fields with events")
}

// An expression that fails at a later idx fails that record only; the
// error says which and appends nothing.
func TestFailureAtLaterIdx(t *testing.T) {
	m := mustNew(t, Options{Expr: `"a" + string(10 % (idx - 7))`, First: 1})
	buf, _, _, err := m.Append([]byte("x"), 3)
	require.NoError(t, err)
	require.Equal(t, "xa2", string(buf))
	buf, _, _, err = m.Append([]byte("x"), 7)
	require.ErrorIs(t, err, ErrExpr)
	require.ErrorContains(t, err, "at idx 7: runtime error: integer divide by zero")
	require.Equal(t, "x", string(buf))
}
