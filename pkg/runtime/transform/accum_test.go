package transform

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/state"
)

// An accumulator is written with a version byte, and the two forms
// written before it (the JSON alone, or a timestamp prefix then the JSON)
// still restore, into either kind of reduce.
func TestAccumCodecVersionAndOlderForms(t *testing.T) {
	ttl, plain := accumCodec{timestamps: true}, accumCodec{}
	b := ttl.Append(nil, &accum{json: []byte(`{"n":1}`), ts: 1 << 40, hasTS: true})
	require.Equal(t, byte(accumVersion), b[0])
	for name, c := range map[string]struct {
		b     []byte
		ts    int64
		hasTS bool
	}{
		"versioned with ts":  {b, 1 << 40, true},
		"versioned, no ts":   {plain.Append(nil, &accum{json: []byte(`{"n":1}`), ts: 7, hasTS: true}), 0, false},
		"versioned, vm":      {ttl.Append(nil, &accum{v: map[string]any{"n": int64(1)}, vm: true}), 0, false},
		"old json":           {[]byte(`{"n":1}`), 0, false},
		"old json, spaced":   {[]byte(" {\"n\":1}"), 0, false},
		"old ts prefix":      {append(binary.LittleEndian.AppendUint64([]byte{legacyTS}, 99), `{"n":1}`...), 99, true},
		"old number":         {[]byte(`-12`), 0, false},
		"old ts then number": {append(binary.LittleEndian.AppendUint64([]byte{legacyTS}, 5), '3'), 5, true},
	} {
		a, err := plain.Decode(c.b)
		require.NoError(t, err, name)
		require.Equal(t, [2]any{c.ts, c.hasTS}, [2]any{a.ts, a.hasTS}, name)
		v, err := a.value()
		require.NoError(t, err, name)
		require.NotNil(t, v, name)
	}
}

// Damaged accumulators are corrupt state, named as the reduce's.
func TestAccumCodecReportsCorruptState(t *testing.T) {
	good := accumCodec{timestamps: true}.Append(nil, &accum{json: []byte(`{"n":1}`), ts: 3, hasTS: true})
	for name, b := range map[string][]byte{
		"empty":         nil,
		"truncated":     good[:len(good)-1],
		"trailing":      append(append([]byte(nil), good...), 0),
		"not json":      {accumVersion, 0, 3, '{', 'x', '}'},
		"old not json":  []byte(`{"n":`),
		"old cut ts":    {legacyTS, 1, 2},
		"bad bool byte": {accumVersion, 7},
	} {
		_, err := accumCodec{}.Decode(b)
		require.ErrorIs(t, err, state.ErrCorrupt, name)
		require.ErrorContains(t, err, "reduce accumulator", name)
	}
	_, err := accumCodec{}.Decode([]byte{7, 0})
	require.ErrorContains(t, err, "reduce accumulator: format version 7 is not one this flinkgo reads")
}

// FuzzStateDecoders feeds arbitrary items to the reduce's accumulator
// decoder: an error, never a panic, and what decodes survives a round
// trip.
func FuzzStateDecoders(f *testing.F) {
	f.Add(accumCodec{timestamps: true}.Append(nil, &accum{json: []byte(`{"n":1}`), ts: 3, hasTS: true}))
	f.Add([]byte(`{"sum":3}`))
	f.Add(binary.LittleEndian.AppendUint64([]byte{legacyTS}, 99))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := accumCodec{timestamps: true}
		a, err := c.Decode(b)
		if err != nil {
			return
		}
		again, err := c.Decode(c.Append(nil, a))
		require.NoError(t, err)
		require.Equal(t, [2]any{a.ts, a.hasTS}, [2]any{again.ts, again.hasTS})
		require.Equal(t, a.json, again.json)
	})
}
