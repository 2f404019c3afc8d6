package pebblestate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/pebblestate"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const maxPar = 16

// backend opens subtask i of par on the heap or on pebble over a MemFS.
func backend(t *testing.T, pebble bool, par, i int) *state.KeyedBackend {
	rng := state.RangeForSubtask(maxPar, par, i)
	if !pebble {
		return state.NewKeyedBackend(maxPar, rng)
	}
	s, err := pebblestate.Open(vfs.NewMem(), fmt.Sprintf("/db/%d", i))
	require.NoError(t, err)
	kb := state.NewKeyedBackendOn(maxPar, rng, s)
	t.Cleanup(func() { require.NoError(t, kb.Close()) })
	return kb
}

// owner returns the subtask of par that owns key.
func owner(key []byte, par int) int {
	kg := state.KeyGroup(key, maxPar)
	for i := 0; i < par; i++ {
		if state.RangeForSubtask(maxPar, par, i).Contains(kg) {
			return i
		}
	}
	panic("no owner")
}

// The same operations give the same answers on both backends: Get, Put,
// Delete, DeleteWhere (which may change the values it keeps), NumKeys.
func TestValueSemanticsEqualOnBothBackends(t *testing.T) {
	const par = 2
	var heap, peb [par]*state.KeyedBackend
	var hv, pv [par]*state.Value[int64]
	for i := 0; i < par; i++ {
		heap[i], peb[i] = backend(t, false, par, i), backend(t, true, par, i)
		var err error
		hv[i], err = state.NewValue(heap[i], "v", state.Int64Codec{})
		require.NoError(t, err)
		pv[i], err = state.NewValue(peb[i], "v", state.Int64Codec{})
		require.NoError(t, err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 5000; step++ {
		key := []byte(fmt.Sprintf("k%d", r.IntN(300)))
		i := owner(key, par)
		hv[i].SetKey(key)
		pv[i].SetKey(key)
		switch op := r.IntN(10); {
		case op < 4:
			h, hok := hv[i].Get()
			p, pok := pv[i].Get()
			require.Equal(t, hok, pok, "step %d key %s", step, key)
			require.Equal(t, h, p)
		case op < 8:
			n := r.Int64N(1000)
			hv[i].Put(n)
			pv[i].Put(n)
		case op < 9:
			hv[i].Delete()
			pv[i].Delete()
		default:
			m := r.Int64N(7) + 2
			drop := func(v *int64) bool { return *v%m == 0 }
			require.Equal(t, hv[i].DeleteWhere(func(v int64) bool { return drop(&v) }), pv[i].DeleteWhere(func(v int64) bool { return drop(&v) }))
		}
		require.Equal(t, heap[i].NumKeys(), peb[i].NumKeys(), "step %d", step)
	}
	for i := 0; i < par; i++ {
		requireSameState(t, heap[i], peb[i])
	}
}

// DeleteWhere's callback may change a value it keeps: on pebble the
// change is written back, as the heap's pointer change is kept.
func TestDeleteWhereWritesBackChanges(t *testing.T) {
	for _, onPebble := range []bool{false, true} {
		kb := backend(t, onPebble, 1, 0)
		v, err := state.NewValue[*int64](kb, "v", ptrCodec{})
		require.NoError(t, err)
		for i, k := range []string{"a", "b", "c"} {
			n := int64(i + 1)
			v.SetKey([]byte(k))
			v.Put(&n)
		}
		// Drop "b" (2), double the others in place.
		require.Equal(t, 1, v.DeleteWhere(func(n *int64) bool {
			if *n == 2 {
				return true
			}
			*n *= 2
			return false
		}))
		require.EqualValues(t, 2, kb.NumKeys())
		got := map[string]int64{}
		for _, k := range []string{"a", "b", "c"} {
			v.SetKey([]byte(k))
			if n, ok := v.Get(); ok {
				got[k] = *n
			}
		}
		require.Equal(t, map[string]int64{"a": 2, "c": 6}, got, "pebble: %v", onPebble)
	}
}

// ptrCodec stores *int64 values, which a DeleteWhere may change in place.
type ptrCodec struct{}

func (ptrCodec) Append(dst []byte, v *int64) []byte { return state.Int64Codec{}.Append(dst, *v) }

func (ptrCodec) Decode(b []byte) (*int64, error) {
	n, err := state.Int64Codec{}.Decode(b)
	return &n, err
}

// requireSameState compares two backends through their snapshots, restored
// into heap backends and read key by key.
func requireSameState(t *testing.T, a, b *state.KeyedBackend) {
	t.Helper()
	require.Equal(t, dump(t, a), dump(t, b))
}

// dump reads every value of "v" of kb through its snapshot.
func dump(t *testing.T, kbs ...*state.KeyedBackend) map[string]int64 {
	t.Helper()
	var snaps []*state.Snapshot
	for _, kb := range kbs {
		data, _ := state.Encode(state.NewOperatorState(), kb)
		s, err := state.Decode(data)
		require.NoError(t, err)
		snaps = append(snaps, s)
	}
	out := map[string]int64{}
	h := state.NewKeyedBackend(maxPar, state.RangeForSubtask(maxPar, 1, 0))
	h.Restore(snaps)
	v, err := state.NewValue(h, "v", state.Int64Codec{})
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		v.SetKey(k)
		if n, ok := v.Get(); ok {
			out[string(k)] = n
		}
	}
	return out
}

// A snapshot taken on one backend restores on the other, at another
// parallelism, with the same values: the state file is canonical.
func TestSnapshotMovesBetweenBackendsAndParallelisms(t *testing.T) {
	for _, tc := range []struct {
		name           string
		fromPeb, toPeb bool
		fromPar, toPar int
	}{
		{"heap 2 to pebble 3", false, true, 2, 3},
		{"pebble 3 to heap 2", true, false, 3, 2},
		{"pebble 1 to pebble 4", true, true, 1, 4},
		{"pebble 4 to pebble 1", true, true, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]int64{}
			from := make([]*state.KeyedBackend, tc.fromPar)
			vals := make([]*state.Value[int64], tc.fromPar)
			for i := range from {
				from[i] = backend(t, tc.fromPeb, tc.fromPar, i)
				var err error
				vals[i], err = state.NewValue(from[i], "v", state.Int64Codec{})
				require.NoError(t, err)
			}
			for n := 0; n < 500; n++ {
				k := []byte(fmt.Sprintf("k%d", n))
				i := owner(k, tc.fromPar)
				vals[i].SetKey(k)
				vals[i].Put(int64(n * 7))
				want[string(k)] = int64(n * 7)
			}
			var snaps []*state.Snapshot
			for _, kb := range from {
				data, _ := state.Encode(state.NewOperatorState(), kb)
				s, err := state.Decode(data)
				require.NoError(t, err)
				snaps = append(snaps, s)
			}
			to := make([]*state.KeyedBackend, tc.toPar)
			var total int64
			for i := range to {
				to[i] = backend(t, tc.toPeb, tc.toPar, i)
				to[i].Restore(snaps)
				v, err := state.NewValue(to[i], "v", state.Int64Codec{})
				require.NoError(t, err)
				for k, n := range want {
					if owner([]byte(k), tc.toPar) != i {
						continue
					}
					v.SetKey([]byte(k))
					got, ok := v.Get()
					require.True(t, ok, k)
					require.Equal(t, n, got, k)
				}
				total += to[i].NumKeys()
			}
			require.EqualValues(t, len(want), total)
			require.Equal(t, want, dump(t, to...))
		})
	}
}

// A damaged value in a snapshot is refused at declaration on pebble as on
// the heap, naming the state and the key group.
func TestCorruptValueRefusedOnRestore(t *testing.T) {
	h := backend(t, false, 1, 0)
	v, err := state.NewValue(h, "v", state.BytesCodec{})
	require.NoError(t, err)
	v.SetKey([]byte("a"))
	v.Put([]byte{0xff, 0xff}) // not a varint: Int64Codec refuses it
	data, _ := state.Encode(state.NewOperatorState(), h)
	s, err := state.Decode(data)
	require.NoError(t, err)
	p := backend(t, true, 1, 0)
	p.Restore([]*state.Snapshot{s})
	_, err = state.NewValue(p, "v", state.Int64Codec{})
	require.ErrorContains(t, err, `restore keyed state "v" key group`)
}

// Map, list and timer state are refused on pebble until they are built.
func TestOtherStateKindsRefused(t *testing.T) {
	p := backend(t, true, 1, 0)
	_, err := state.NewMap(p, "m", state.StringCodec{}, state.Int64Codec{})
	require.ErrorContains(t, err, "map state is not on the pebble state backend yet")
	_, err = state.NewTimers(p, "t")
	require.ErrorContains(t, err, "timers state is not on the pebble state backend yet")
}

// Leftovers of earlier attempts of the same subtask are removed at open;
// other subtasks' directories stay.
func TestOpenSubtaskRemovesEarlierAttempts(t *testing.T) {
	fsys := vfs.NewMem()
	old, err := pebblestate.OpenSubtask(fsys, "/p", "job", "count", 0, 1)
	require.NoError(t, err)
	require.NoError(t, old.Close()) // a killed daemon leaves it
	other, err := pebblestate.OpenSubtask(fsys, "/p", "job", "count", 1, 1)
	require.NoError(t, err)
	require.NoError(t, other.Close())
	s, err := pebblestate.OpenSubtask(fsys, "/p", "job", "count", 0, 2)
	require.NoError(t, err)
	es, err := fsys.ReadDir("/p/job")
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"count-0-a2", "count-1-a1"}, names)
	require.NoError(t, s.Remove())
	_, err = fsys.Stat("/p/job/count-0-a2")
	require.Error(t, err)
}
