package join

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Format 1 (one timer per key) reads as timers[0], with no timer of the
// second slot; format 2 round-trips both. (testdata/oldsavepoint restores
// a whole job written in format 1.)
func TestStateCodecReadsFormat1(t *testing.T) {
	e := state.NewEncoder(1)
	e.Varint(1500)
	e.Uvarint(1) // left: one row
	e.Varint(1000)
	e.Varint(1000)
	e.Bytes([]byte(`{"id":1}`))
	e.Bool(true)
	e.Uvarint(0) // right: none
	e.Uvarint(0) // sessions: none
	var stats [2]sideStats
	k, err := stateCodec{stats: &stats}.Decode(e.Encoded())
	require.NoError(t, err)
	require.Equal(t, [2]int64{1500, runtime.MinWatermark}, k.timers)
	require.Equal(t, []row{{slot: 1000, ts: 1000, value: []byte(`{"id":1}`), matched: true}}, k.sides[left])
	require.Empty(t, k.sides[right])
	require.Equal(t, sideStats{rows: 1, bytes: 8}, stats[left])

	k.timers[1] = 1200
	k.sides[right] = []row{{slot: 900, ts: 900, value: []byte(`{}`)}}
	back, err := stateCodec{}.Decode(stateCodec{}.Append(nil, k))
	require.NoError(t, err)
	require.Equal(t, k, back)
}
