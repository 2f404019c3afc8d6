package transform

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// ttlReducer is a counting reduce with ttl (0: none) over its own keyed
// backend, restored from snap when given.
func ttlReducer(t *testing.T, ttl int64, snap []byte) (*reduceOp, runtime.Operator, *state.KeyedBackend) {
	t.Helper()
	p, err := expr.Compile(`{n: acc.n + 1, last: ts}`, expr.Any, "acc")
	require.NoError(t, err)
	init, err := expr.Compile(`{n: 0}`, expr.Any)
	require.NoError(t, err)
	kb := state.NewKeyedBackend(128, state.AllKeyGroups(128))
	if snap != nil {
		s, err := state.Decode(snap)
		require.NoError(t, err)
		kb.Restore([]*state.Snapshot{s})
	}
	o := &reduceOp{prog: p.Clone(), init: init.Clone(), ttl: ttl}
	if f := expr.NewFold(p, init, "acc"); f != nil {
		o.fold = f.Clone()
	}
	var op runtime.Operator = o
	if ttl > 0 {
		op = &reduceTTLOp{reduceOp: o, nextSweep: math.MinInt64}
	}
	require.NoError(t, op.Open(runtime.NewContext(runtime.ContextOptions{UID: "r", Keyed: kb, MaxParallelism: 128})))
	return o, op, kb
}

// send reduces a record of key at ts and returns what it emitted.
func send(t *testing.T, o *reduceOp, key string, ts int64) string {
	t.Helper()
	out := &collector{}
	r := runtime.Record{Key: []byte(key), Value: []byte(`{"ts": ` + strconv.FormatInt(ts, 10) + `}`), Timestamp: ts}
	require.NoError(t, o.reduce(&r, out))
	require.Len(t, out.got, 1)
	return string(out.got[0].Value)
}

// A record more than ttl after its key's latest starts from init again;
// one at exactly ttl, or behind the latest, continues it. Without a ttl
// nothing is forgotten.
func TestReduceTTLForgetsByTimestamp(t *testing.T) {
	o, _, _ := ttlReducer(t, 1000, nil)
	require.Equal(t, `{"last":5000,"n":1}`, send(t, o, "a", 5000))
	require.Equal(t, `{"last":6000,"n":2}`, send(t, o, "a", 6000), "exactly ttl later")
	require.Equal(t, `{"last":5500,"n":3}`, send(t, o, "a", 5500), "behind the latest: measured from 6000")
	require.Equal(t, `{"last":7000,"n":4}`, send(t, o, "a", 7000))
	require.Equal(t, `{"last":8001,"n":1}`, send(t, o, "a", 8001), "more than ttl after 7000")
	require.Equal(t, `{"last":1,"n":1}`, send(t, o, "b", 1), "keys apart")

	plain, _, _ := ttlReducer(t, 0, nil)
	send(t, plain, "a", 5000)
	require.Equal(t, `{"last":999999999,"n":2}`, send(t, plain, "a", 999999999))
}

// The watermark sweeps away the accumulators it is more than ttl past,
// once per ttl of its advance; the end of input (the largest watermark)
// sweeps nothing.
func TestReduceTTLSweepsByWatermark(t *testing.T) {
	o, op, kb := ttlReducer(t, 1000, nil)
	l := op.(runtime.WatermarkListener)
	send(t, o, "old", 1000)
	send(t, o, "new", 5000)
	require.NoError(t, l.OnWatermark(2000, nil))
	require.Equal(t, int64(2), kb.NumKeys(), "2000 is not more than ttl past 1000")
	require.NoError(t, l.OnWatermark(2500, nil))
	require.Equal(t, int64(2), kb.NumKeys(), "no sweep before the watermark moved ttl")
	require.NoError(t, l.OnWatermark(3000, nil))
	require.Equal(t, int64(1), kb.NumKeys(), "old swept at 3000")
	o.acc.SetKey([]byte("new"))
	_, ok := o.acc.Get()
	require.True(t, ok)
	require.NoError(t, l.OnWatermark(math.MaxInt64, nil))
	require.Equal(t, int64(1), kb.NumKeys(), "the end of input sweeps nothing (a drained savepoint keeps its keys)")
}

// A snapshot keeps each key's latest timestamp; a reduce without a ttl
// restores it (and drops the timestamps), and one with a ttl restores a
// snapshot without them: a restored key then lives ttl past the first
// watermark after the restore.
func TestReduceTTLSnapshotsRestoreEitherWay(t *testing.T) {
	o, _, kb := ttlReducer(t, 1000, nil)
	send(t, o, "a", 5000)
	send(t, o, "b", 5000)
	snap, _ := state.Encode(state.NewOperatorState(), kb)

	o2, _, _ := ttlReducer(t, 1000, snap)
	require.Equal(t, `{"last":6000,"n":2}`, send(t, o2, "a", 6000), "the timestamp came back: 1000 after it")
	require.Equal(t, `{"last":6001,"n":1}`, send(t, o2, "b", 6001), "the timestamp came back: more than 1000 after it")

	plain, _, pkb := ttlReducer(t, 0, snap)
	require.Equal(t, `{"last":99000,"n":2}`, send(t, plain, "a", 99000))
	plainSnap, _ := state.Encode(state.NewOperatorState(), pkb)

	o3, op3, kb3 := ttlReducer(t, 1000, plainSnap)
	l := op3.(runtime.WatermarkListener)
	require.NoError(t, l.OnWatermark(200000, nil))
	require.Equal(t, int64(2), kb3.NumKeys(), "timestamps unknown: kept, timed from this watermark")
	require.NoError(t, l.OnWatermark(201001, nil))
	require.Zero(t, kb3.NumKeys(), "ttl past the watermark that timed them")
	require.Equal(t, `{"last":201002,"n":1}`, send(t, o3, "a", 201002))
}

// Only a reduce with a ttl hears the watermark (and pays for it).
func TestReduceTTLIsAWatermarkListenerOnlyWithATTL(t *testing.T) {
	_, plain, _ := ttlReducer(t, 0, nil)
	_, ok := plain.(runtime.WatermarkListener)
	require.False(t, ok)
	_, ttl, _ := ttlReducer(t, 1, nil)
	_, ok = ttl.(runtime.WatermarkListener)
	require.True(t, ok)
}

// A truncated timestamp prefix fails the restore instead of reading junk.
func TestAccumCodecRefusesACutTimestamp(t *testing.T) {
	_, err := accumCodec{}.Decode([]byte{legacyTS, 1, 2})
	require.ErrorIs(t, err, state.ErrCorrupt)
	a, err := accumCodec{}.Decode(accumCodec{timestamps: true}.Append(nil, &accum{json: []byte(`{"n":1}`), ts: -5, hasTS: true}))
	require.NoError(t, err)
	require.Equal(t, int64(-5), a.ts)
	require.Equal(t, `{"n":1}`, string(a.json))
}
