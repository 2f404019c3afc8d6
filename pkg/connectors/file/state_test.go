package file

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/state"
)

func TestStateRoundTrip(t *testing.T) {
	snap := snapshot{
		Pending:    []pending{{Bucket: "2024/01", Hidden: ".part-0-1.inprogress.x", Final: "part-0-1", Index: 0, Part: 1, Size: 10, Checkpoint: 7}},
		InProgress: []resumable{{Bucket: "", Hidden: ".part-3-9.inprogress.y", Final: "part-3-9", Index: 3, Part: 9, Length: 123}},
		Counters:   counters{Subtask: 0, Next: map[int]int64{0: 2, 3: 10}, Referenced: []string{"2024/01/.part-0-1.inprogress.x", ".part-3-9.inprogress.y"}},
	}
	o := state.NewOperatorState()
	putState(o, snap)
	r, ok, err := getState(o)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, snap.Pending, r.Pending)
	require.Equal(t, snap.InProgress, r.InProgress)
	require.Equal(t, []counters{snap.Counters}, r.Counters)

	_, ok, err = getState(state.NewOperatorState())
	require.NoError(t, err)
	require.False(t, ok)
}

func TestStateRejectsUnknownVersionAndDamage(t *testing.T) {
	item := pending{Bucket: "a", Hidden: ".part-0-0.inprogress.x", Final: "part-0-0"}.encode()
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"version":   {append([]byte{9}, item[1:]...), "format version 9 is not one this flinkgo reads"},
		"truncated": {item[:len(item)-3], "truncated"},
		"trailing":  {append(item, 1), "trailing"},
		"kind":      {resumable{}.encode(), "kind"},
	} {
		o := state.NewOperatorState()
		o.Set(listCounters, state.Union, [][]byte{counters{Next: map[int]int64{}}.encode()})
		o.Set(listPending, state.Split, [][]byte{c.b})
		_, _, err := getState(o)
		require.ErrorContains(t, err, c.want, name)
		require.ErrorContains(t, err, `(list "pending", item 0)`, name)
	}
}

// FuzzGetState: no input makes decoding panic or loop; damage is an error.
func FuzzGetState(f *testing.F) {
	f.Add(pending{Bucket: "a", Hidden: ".part-0-0.inprogress.x", Final: "part-0-0", Size: 3, Checkpoint: 1}.encode(),
		counters{Next: map[int]int64{0: 1}, Referenced: []string{"a/b"}}.encode())
	f.Add([]byte{1, 'P'}, []byte{1, 'C', 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, pending, counters []byte) {
		o := state.NewOperatorState()
		o.Set(listCounters, state.Union, [][]byte{counters})
		o.Set(listPending, state.Split, [][]byte{pending})
		o.Set(listInProgress, state.Split, [][]byte{pending})
		_, _, _ = getState(o)
	})
}
