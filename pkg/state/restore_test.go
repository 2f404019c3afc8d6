package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opSnapshots makes the snapshots of oldPar subtasks: subtask i has
// split list "commits" with items "c<i>-<j>" (i+1 of them, so sizes vary),
// union list "splits" with "s<i>" and, on even subtasks, split list "even".
func opSnapshots(t *testing.T, oldPar int) ([]*Snapshot, []string, []string) {
	var ops []*OperatorState
	var splitItems, unionItems []string
	for i := 0; i < oldPar; i++ {
		o := NewOperatorState()
		var items []string
		for j := 0; j <= i; j++ {
			items = append(items, fmt.Sprintf("c%d-%d", i, j))
		}
		splitItems = append(splitItems, items...)
		o.Set("commits", Split, listOf(items...))
		o.Set("splits", Union, listOf(fmt.Sprint("s", i)))
		unionItems = append(unionItems, fmt.Sprint("s", i))
		if i%2 == 0 {
			o.Set("even", Split, listOf(fmt.Sprint("e", i)))
		}
		ops = append(ops, o)
	}
	return snapshotAll(t, ops, nil), splitItems, unionItems
}

func TestRestoreOperatorStateSameParallelism(t *testing.T) {
	old, _, unionItems := opSnapshots(t, 3)
	for i := 0; i < 3; i++ {
		o := RestoreOperatorState(old, i, 3)
		var want []string
		for j := 0; j <= i; j++ {
			want = append(want, fmt.Sprintf("c%d-%d", i, j))
		}
		assert.Equal(t, want, strs(o.Get("commits")), "subtask %d gets its own split items back", i)
		assert.Equal(t, unionItems, strs(o.Get("splits")), "subtask %d gets every union item", i)
		if i%2 == 0 {
			assert.Equal(t, []string{fmt.Sprint("e", i)}, strs(o.Get("even")))
		} else {
			assert.Nil(t, o.Get("even"), "subtask %d had no list even", i)
		}
		for _, l := range o.Lists() {
			want := map[string]Redistribution{"commits": Split, "even": Split, "splits": Union}[l.Name]
			assert.Equal(t, want, l.Mode, "%s keeps its mode", l.Name)
		}
	}
}

// TestRestoreOperatorStateRescale: Split items are restored exactly once
// across the new subtasks, evenly; Union items go to every subtask.
func TestRestoreOperatorStateRescale(t *testing.T) {
	for _, tc := range [][2]int{{1, 1}, {1, 4}, {2, 5}, {3, 2}, {5, 2}, {3, 1}, {4, 7}, {7, 3}, {2, 3}} {
		oldPar, newPar := tc[0], tc[1]
		t.Run(fmt.Sprintf("%d-to-%d", oldPar, newPar), func(t *testing.T) {
			old, splitItems, unionItems := opSnapshots(t, oldPar)
			var got []string
			minN, maxN := len(splitItems)+1, -1
			for i := 0; i < newPar; i++ {
				o := RestoreOperatorState(old, i, newPar)
				items := strs(o.Get("commits"))
				got = append(got, items...)
				minN, maxN = min(minN, len(items)), max(maxN, len(items))
				assert.Equal(t, unionItems, strs(o.Get("splits")), "union: subtask %d gets all", i)
			}
			sort.Strings(got)
			want := slices.Clone(splitItems)
			sort.Strings(want)
			assert.Equal(t, want, got, "every split item exactly once")
			if oldPar != newPar {
				assert.LessOrEqual(t, maxN-minN, 1, "split items are dealt evenly on rescale")
			}
		})
	}
}

func TestRestoreOperatorStateMissingSubtasks(t *testing.T) {
	old, _, _ := opSnapshots(t, 3)
	old[1] = nil // a subtask that had no state (or no file)
	o := RestoreOperatorState(old, 1, 3)
	assert.Nil(t, o.Get("commits"))
	assert.Equal(t, []string{"s0", "s2"}, strs(o.Get("splits")))

	var all []string
	for i := 0; i < 2; i++ {
		all = append(all, strs(RestoreOperatorState(old, i, 2).Get("commits"))...)
	}
	sort.Strings(all)
	assert.Equal(t, []string{"c0-0", "c2-0", "c2-1", "c2-2"}, all)

	assert.True(t, RestoreOperatorState(nil, 0, 2).Empty(), "nothing to restore")
	assert.True(t, RestoreOperatorState([]*Snapshot{nil, nil}, 0, 2).Empty())
}

func TestOperatorState(t *testing.T) {
	o := NewOperatorState()
	assert.True(t, o.Empty())
	assert.Nil(t, o.Get("x"))
	o.Set("b", Union, listOf("1"))
	o.Set("a", Split, listOf("2", "3"))
	o.Set("b", Split, listOf("4")) // replaces
	assert.False(t, o.Empty())
	assert.Equal(t, []string{"4"}, strs(o.Get("b")))
	var names []string
	for _, l := range o.Lists() {
		names = append(names, l.Name+":"+l.Mode.String())
	}
	assert.Equal(t, []string{"a:split", "b:split"}, names)
	assert.Equal(t, "union", Union.String())
	assert.Equal(t, "unknown", Redistribution(0).String())
}

// TestKeyedRestoreRescale is a property over random keys: the snapshots of
// an operator at parallelism 2 restore into 1, 2, 3 and 7 subtasks with
// every key exactly once, at the subtask that owns its key group, with its
// values.
func TestKeyedRestoreRescale(t *testing.T) {
	const maxPar = 128
	rnd := rand.New(rand.NewPCG(7, 11))
	keys := map[string]int{}
	for len(keys) < 3000 {
		k := make([]byte, 1+rnd.IntN(12))
		for i := range k {
			k[i] = byte(rnd.Uint32())
		}
		keys[string(k)] = len(keys)
	}
	old := keyedSubtasks(maxPar, 2)
	oldStates := []states{declareStates(t, old[0]), declareStates(t, old[1])}
	var total int64
	for k, i := range keys {
		b := owner(old, []byte(k))
		oldStates[slices.Index(old, b)].write(t, []byte(k), valuesFor(i))
	}
	for _, b := range old {
		total += b.NumKeys()
	}
	snaps := snapshotAll(t, nil, old)

	for _, newPar := range []int{1, 2, 3, 7, maxPar} {
		t.Run(fmt.Sprintf("2-to-%d", newPar), func(t *testing.T) {
			nbs := keyedSubtasks(maxPar, newPar)
			ns := make([]states, newPar)
			var restored int64
			for i, b := range nbs {
				b.Restore(snaps)
				ns[i] = declareStates(t, b)
				restored += b.NumKeys()
			}
			assert.Equal(t, total, restored, "no key lost, none duplicated")
			for k, i := range keys {
				b := owner(nbs, []byte(k))
				ns[slices.Index(nbs, b)].check(t, []byte(k), valuesFor(i))
			}
			// Going back to parallelism 2 gives the original state back.
			back := keyedSubtasks(maxPar, 2)
			bsnaps := snapshotAll(t, nil, nbs)
			var n int64
			for _, b := range back {
				b.Restore(bsnaps)
				n += b.NumKeys()
			}
			assert.Equal(t, total, n)
		})
	}
}

// TestKeyedRestoreSkipsForeignGroups: a backend keeps only its key groups,
// and ignores operator-only snapshots.
func TestKeyedRestoreSkipsForeignGroups(t *testing.T) {
	src := NewKeyedBackend(128, KeyGroupRange{0, 128})
	s := declareStates(t, src)
	for i := 0; i < 500; i++ {
		s.write(t, []byte(fmt.Sprint(i)), valuesFor(i))
	}
	snaps := snapshotAll(t, []*OperatorState{sampleOperatorState(), sampleOperatorState()}, []*KeyedBackend{src, nil})
	require.False(t, snaps[1].keyed)
	b := NewKeyedBackend(128, KeyGroupRange{40, 50})
	b.Restore(append(snaps, nil))
	ns := declareStates(t, b)
	var want int64
	for i := 0; i < 500; i++ {
		key := []byte(fmt.Sprint(i))
		if b.Range().Contains(KeyGroup(key, 128)) {
			ns.check(t, key, valuesFor(i))
			want += 2
			if valuesFor(i).tags != nil {
				want++
			}
		}
	}
	assert.Positive(t, want)
	assert.Equal(t, want, b.NumKeys())
}

func TestDeclareRestoredWithAnotherKind(t *testing.T) {
	src := NewKeyedBackend(128, KeyGroupRange{0, 128})
	s := declareStates(t, src)
	s.write(t, []byte("k"), valuesFor(1))
	snaps := snapshotAll(t, nil, []*KeyedBackend{src})

	b := NewKeyedBackend(128, KeyGroupRange{0, 128})
	b.Restore(snaps)
	_, err := NewMap(b, "counts", Codec[string](StringCodec{}), Codec[int64](Int64Codec{}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `keyed state "counts" was snapshotted as value state but is declared as map state`)
	_, err = NewValue(b, "tags", Codec[[]byte](BytesCodec{}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `keyed state "tags" was snapshotted as map state but is declared as value state`)
	_, err = NewReducing(b, "tags", Codec[int64](Int64Codec{}), nil)
	require.Error(t, err, "a reducing state is a value state")

	// The same kind, even through another constructor, restores.
	sums, err := NewReducing(b, "counts", Codec[int64](Int64Codec{}), func(a, v int64) (int64, error) { return a + v, nil })
	require.NoError(t, err)
	sums.SetKey([]byte("k"))
	got, err := sums.Add(1)
	require.NoError(t, err)
	assert.Equal(t, valuesFor(1).count+1, got)
}

func TestDeclareTwice(t *testing.T) {
	b := NewKeyedBackend(8, KeyGroupRange{0, 8})
	_, err := NewValue(b, "x", Codec[int64](Int64Codec{}))
	require.NoError(t, err)
	_, err = NewMap(b, "x", Codec[string](StringCodec{}), Codec[int64](Int64Codec{}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `keyed state "x" declared twice`)
}

func TestSetCurrentKeyOfAnotherSubtaskPanics(t *testing.T) {
	kbs := keyedSubtasks(128, 2)
	var key []byte
	for i := 0; ; i++ {
		key = []byte(fmt.Sprint(i))
		if owner(kbs, key) == kbs[1] {
			break
		}
	}
	kbs[1].SetCurrentKey(key)
	assert.Equal(t, key, kbs[1].CurrentKey())
	assert.PanicsWithValue(t,
		fmt.Sprintf("state: key group %d of key %q is outside [0,64) (bug: record routed to the wrong subtask)", KeyGroup(key, 128), key),
		func() { kbs[0].SetCurrentKey(key) })
}

func TestValueAndMapState(t *testing.T) {
	b := NewKeyedBackend(16, KeyGroupRange{0, 16})
	assert.Equal(t, 16, b.MaxParallelism())
	s := declareStates(t, b)
	s.counts.SetKey([]byte("a"))
	_, ok := s.counts.Get()
	assert.False(t, ok)
	s.counts.Put(1)
	s.counts.Put(2)
	v, ok := s.counts.Get()
	assert.True(t, ok)
	assert.Equal(t, int64(2), v)
	s.counts.SetKey([]byte("b"))
	_, ok = s.counts.Get()
	assert.False(t, ok, "values are per key")
	s.counts.Put(5)
	assert.Equal(t, int64(2), b.NumKeys())
	s.counts.Delete()
	assert.Equal(t, int64(1), b.NumKeys())

	s.tags.Put("x", []byte("1"))
	s.tags.Put("y", []byte("2"))
	got, ok := s.tags.Get("x")
	assert.True(t, ok)
	assert.Equal(t, "1", string(got))
	n := 0
	s.tags.Range(func(string, []byte) bool { n++; return false })
	assert.Equal(t, 1, n, "Range stops when fn returns false")
	assert.Equal(t, int64(2), b.NumKeys())
	s.tags.Remove("x")
	s.tags.Remove("nope")
	assert.Equal(t, int64(2), b.NumKeys())
	s.tags.Remove("y")
	assert.Equal(t, int64(1), b.NumKeys(), "the last user key removes the key")
	s.tags.Remove("y")
	_, ok = s.tags.Get("y")
	assert.False(t, ok)

	reducing, err := NewReducing(b, "failing", Codec[int64](Int64Codec{}), func(acc, v int64) (int64, error) {
		if v < 0 {
			return 0, errReduce
		}
		return acc * v, nil
	})
	require.NoError(t, err)
	reducing.SetKey([]byte("a"))
	r, err := reducing.Add(3)
	require.NoError(t, err)
	assert.Equal(t, int64(3), r, "the first value is kept as it is")
	r, err = reducing.Add(4)
	require.NoError(t, err)
	assert.Equal(t, int64(12), r)
	_, err = reducing.Add(-1)
	assert.ErrorIs(t, err, errReduce)
	r, _ = reducing.Get()
	assert.Equal(t, int64(12), r, "a failed reduction leaves the value")
	assert.Equal(t, "value", kindValue.String())
	assert.Equal(t, "map", kindMap.String())
	assert.Equal(t, "Kind(9)", tableKind(9).String())
}
