package window

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// The fired watermark is written with a version byte; the bare varint
// written before it still restores.
func TestFiredWatermarkVersionAndOldForm(t *testing.T) {
	for _, w := range []int64{-1, 0, 1, 63, 64, 1767225600000, runtime.MinWatermark, runtime.MaxWatermark - 1} {
		for _, bound := range []bool{false, true} {
			b := encodeFired(firedMark{w: w, bound: bound})
			require.Equal(t, byte(firedVersion), b[0])
			got, err := decodeFired(b)
			require.NoError(t, err)
			require.Equal(t, firedMark{w: w, bound: bound}, got)
		}
		got, err := decodeFired(binary.AppendVarint(nil, w))
		require.NoError(t, err, "old form of %d", w)
		require.Equal(t, firedMark{w: w}, got)
	}
	none := runtime.MinWatermark // no last end recorded
	for _, c := range []struct {
		items   []firedMark
		lastEnd int64
		want    firedMark
	}{
		{nil, none, firedMark{w: runtime.MinWatermark}},
		{[]firedMark{{w: 500}, {w: 300}}, none, firedMark{w: 300}},
		{[]firedMark{{w: 500}, {w: 300}}, 1000, firedMark{w: 300}},
		{[]firedMark{{w: 500, bound: true}, {w: runtime.MinWatermark, bound: true}}, none, firedMark{w: 500, bound: true}},
		{[]firedMark{{w: 500, bound: true}, {w: 700}}, none, firedMark{w: 700}},
		{[]firedMark{{w: 500, bound: true}, {w: 300}}, none, firedMark{w: 500}},
		// Drained: the windows that fired stay fired (up to the last end),
		// or, with no last end (a snapshot of a flinkgo before it), anew.
		{[]firedMark{{w: runtime.MaxWatermark}}, none, firedMark{w: runtime.MinWatermark}},
		{[]firedMark{{w: runtime.MaxWatermark}, {w: runtime.MaxWatermark}}, 2000, firedMark{w: 1999}},
	} {
		var items [][]byte
		for _, m := range c.items {
			items = append(items, encodeFired(m))
		}
		got, err := restoreFired(items, c.lastEnd)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%+v, last end %d", c.items, c.lastEnd)
	}
	old, err := restoreFired([][]byte{encodeFired(firedMark{w: 500}), binary.AppendVarint(nil, 300)}, none)
	require.NoError(t, err)
	require.Equal(t, firedMark{w: 300}, old)
	drainedOld, err := restoreFired([][]byte{binary.AppendVarint(nil, runtime.MaxWatermark)}, 2000)
	require.NoError(t, err)
	require.Equal(t, firedMark{w: 1999}, drainedOld, "a bare varint MaxWatermark is drained too")
}

// The last window end fired is written with a version byte; a restore
// takes the greatest of the subtasks' (none: MinWatermark).
func TestLastEndVersionAndRestore(t *testing.T) {
	for _, e := range []int64{-1, 0, 1, 63, 64, 1767225600000, runtime.MinWatermark, runtime.MaxWatermark} {
		b := encodeLastEnd(e)
		require.Equal(t, byte(lastEndVersion), b[0])
		got, err := decodeLastEnd(b)
		require.NoError(t, err)
		require.Equal(t, e, got)
	}
	got, err := restoreLastEnd(nil)
	require.NoError(t, err)
	require.Equal(t, runtime.MinWatermark, got)
	got, err = restoreLastEnd([][]byte{encodeLastEnd(2000), encodeLastEnd(runtime.MinWatermark), encodeLastEnd(1000)})
	require.NoError(t, err)
	require.Equal(t, int64(2000), got)
}

// Damaged window state is corrupt state naming what it is.
func TestDamagedWindowStateIsCorrupt(t *testing.T) {
	good := encodeFired(firedMark{w: 1767225600000})
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte(nil), good...), 0),
	} {
		_, err := restoreFired([][]byte{b}, runtime.MinWatermark)
		require.ErrorIs(t, err, state.ErrCorrupt, name)
		require.ErrorContains(t, err, "window fired watermark", name)
	}
	goodEnd := encodeLastEnd(1767225600000)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": goodEnd[:len(goodEnd)-1],
		"trailing":  append(append([]byte(nil), goodEnd...), 0),
	} {
		_, err := restoreLastEnd([][]byte{b})
		require.ErrorIs(t, err, state.ErrCorrupt, name)
		require.ErrorContains(t, err, "window last fired end", name)
	}
	aggs := fuzzAggs(t)
	acc := accCodec{aggs: aggs}.Append(nil, newAcc(aggs))
	_, err := accCodec{aggs: aggs}.Decode(acc[:len(acc)-1])
	require.ErrorIs(t, err, state.ErrCorrupt)
	_, err = sessionCodec{accCodec{aggs: aggs}}.Decode([]byte{1, 2})
	require.ErrorIs(t, err, state.ErrCorrupt)
}

func fuzzAggs(t testing.TB) []aggregate {
	var aggs []aggregate
	for name, src := range map[string]string{"n": "count()", "s": "sum(v)", "d": "countDistinct(v)", "m": "maxBy(v, w)", "f": "first(v)"} {
		ag, err := parseAggregate(name, src)
		require.NoError(t, err)
		aggs = append(aggs, ag)
	}
	return aggs
}

// FuzzStateDecoders feeds arbitrary items to every decoder of the
// window's state (accumulators, sessions, the fired watermark, the last
// end fired): an error,
// never a panic, and what decodes survives a round trip.
func FuzzStateDecoders(f *testing.F) {
	aggs := fuzzAggs(f)
	acc := newAcc(aggs)
	acc.Records = 3
	acc.Slots[0].Set = map[string]struct{}{"a": {}}
	acc.Slots[1].V = "x"
	f.Add(accCodec{aggs: aggs}.Append(nil, acc))
	f.Add(sessionCodec{accCodec{aggs: aggs}}.Append(nil, &session{End: 9, Acc: acc}))
	f.Add(encodeFired(firedMark{w: 1767225600000, bound: true}))
	f.Add(encodeLastEnd(1767225600000))
	f.Fuzz(func(t *testing.T, b []byte) {
		ac, sc := accCodec{aggs: aggs}, sessionCodec{accCodec{aggs: aggs}}
		if a, err := ac.Decode(b); err == nil {
			again, err := ac.Decode(ac.Append(nil, a))
			require.NoError(t, err)
			require.Equal(t, a.Records, again.Records)
			for k := range a.Slots {
				x, y := a.Slots[k], again.Slots[k]
				require.Equal(t, [3]int64{x.N, x.ISum, x.TS}, [3]int64{y.N, y.ISum, y.TS})
				require.Equal(t, len(x.Set), len(y.Set))
			}
		}
		if s, err := sc.Decode(b); err == nil {
			_, err := sc.Decode(sc.Append(nil, s))
			require.NoError(t, err)
		}
		if m, err := decodeFired(b); err == nil {
			again, err := decodeFired(encodeFired(m))
			require.NoError(t, err)
			require.Equal(t, m, again)
		}
		if e, err := decodeLastEnd(b); err == nil {
			again, err := decodeLastEnd(encodeLastEnd(e))
			require.NoError(t, err)
			require.Equal(t, e, again)
		}
	})
}
