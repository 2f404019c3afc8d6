package join

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Format 1 (one timer per key) reads as timers[0], with no timer of the
// second slot, and rows whose until is unset; format 3 round-trips both
// timers and each row's until: unset, none or a time. (testdata/oldsavepoint restores
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
	require.Equal(t, []row{{slot: 1000, ts: 1000, until: untilUnset, n: 8, matched: true}}, k.sides[left])
	require.True(t, k.unset, "a left row's until is to be evaluated")
	require.Equal(t, `{"id":1}`, string(k.value(left, &k.sides[left][0])))
	require.Empty(t, k.sides[right])
	require.Equal(t, sideStats{rows: 1, bytes: 8}, stats[left])

	k.timers[1] = 1200
	k.insert(right, row{slot: 900, ts: 900, until: untilUnset}, []byte(`{}`))
	k.insert(left, row{slot: 1100, ts: 1100, until: 1130}, []byte(`{"id":2}`))
	k.insert(left, row{slot: 1200, ts: 1200, until: untilNone}, []byte(`{"id":3}`))
	back, err := stateCodec{}.Decode(stateCodec{}.Append(nil, k))
	require.NoError(t, err)
	require.Equal(t, k, back)
}

// Format 2 (both timers, no until) reads with its rows' until unset, to be
// evaluated by a join that has until (intervalJoin.evalUnset).
func TestStateCodecReadsFormat2(t *testing.T) {
	e := state.NewEncoder(2)
	e.Varint(1500)
	e.Varint(1200)
	e.Uvarint(1) // left: one row
	e.Varint(1000)
	e.Varint(1000)
	e.Bytes([]byte(`{"id":1}`))
	e.Bool(false)
	e.Uvarint(1) // right: one row
	e.Varint(1100)
	e.Varint(1100)
	e.Bytes([]byte(`{"a":2}`))
	e.Bool(false)
	e.Uvarint(0) // sessions: none
	k, err := stateCodec{}.Decode(e.Encoded())
	require.NoError(t, err)
	require.Equal(t, [2]int64{1500, 1200}, k.timers)
	require.Equal(t, []row{{slot: 1000, ts: 1000, until: untilUnset, n: 8}}, k.sides[left])
	require.Equal(t, []row{{slot: 1100, ts: 1100, until: untilUnset, n: 7}}, k.sides[right])
	require.True(t, k.unset)
}

// A side's buffer keeps the values of its rows as rows come and go in
// another order than they came (by slot): it empties with the side's last
// row, and once mostly dead it is rebuilt from the live rows, which keep
// their values.
func TestRowValuesSurviveCutsAndCompaction(t *testing.T) {
	k := newKeyState()
	val := func(i int) []byte { return []byte(fmt.Sprintf(`{"i":%d,"pad":"%0500d"}`, i, i)) }
	want := map[int64]string{}
	for i := 0; i < 400; i++ {
		slot := int64((i * 7919) % 400) // out of order
		k.insert(left, row{slot: slot, ts: slot}, val(i))
		want[slot] = string(val(i))
	}
	check := func() {
		t.Helper()
		require.Len(t, k.sides[left], len(want))
		for i := range k.sides[left] {
			r := &k.sides[left][i]
			require.Equal(t, want[r.slot], string(k.value(left, r)), "slot %d", r.slot)
		}
	}
	size := func() (n int) {
		for _, c := range k.vals[left] {
			n += cap(c)
		}
		return n
	}
	before := size()
	for cut := int64(0); cut < 350; cut += 50 { // drop slots [cut, cut+50), oldest first
		lo, hi := k.between(left, cut, cut+49)
		gone := append([]row(nil), k.sides[left][lo:hi]...)
		k.sides[left] = append(k.sides[left][:lo], k.sides[left][hi:]...)
		k.drop(left, gone)
		for s := cut; s < cut+50; s++ {
			delete(want, s)
		}
		check()
	}
	require.Less(t, size(), before, "the buffer was rebuilt from the live rows")
	require.LessOrEqual(t, k.dead[left], max(compactAt, k.used[left]-k.dead[left]), "dead bytes stay below the live ones")
	k.sides[left] = nil
	k.drop(left, nil)
	require.Nil(t, k.vals[left], "a side without rows keeps no buffer")
}
