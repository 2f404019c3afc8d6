package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// slicedModel is what a Sliced must hold: key → slice start → value.
type slicedModel map[string]map[int64]int64

// randomSliced fills the Sliced of two subtasks and a model with random
// puts and slice drops.
func randomSliced(t *testing.T, old []*KeyedBackend, ss []*Sliced[int64]) slicedModel {
	rnd := rand.New(rand.NewPCG(3, 5))
	m := slicedModel{}
	for i := 0; i < 20000; i++ {
		k := []byte(fmt.Sprint("k", rnd.IntN(700)))
		start := int64(rnd.IntN(12)) * 500
		b := owner(old, k)
		s := ss[slices.Index(old, b)]
		b.SetCurrentKey(k)
		had := len(m[string(k)]) > 0
		if m[string(k)] == nil {
			m[string(k)] = map[int64]int64{}
		}
		v, ok := s.Get(start)
		require.Equal(t, m[string(k)][start] != 0, ok)
		require.Equal(t, m[string(k)][start], v)
		require.Equal(t, !had, s.Put(start, v+1), "Put reports a key's first value")
		m[string(k)][start] = v + 1
		if i%997 == 0 { // drop the oldest slice everywhere
			for j, s := range ss {
				if len(s.Starts()) == 0 {
					continue
				}
				first := s.Starts()[0]
				entries, keys := s.Drop(first)
				var wantE, wantK int
				for k, byStart := range m {
					if owner(old, []byte(k)) != old[j] || byStart[first] == 0 {
						continue
					}
					wantE++
					delete(byStart, first)
					if len(byStart) == 0 {
						wantK++
					}
				}
				require.Equal(t, [2]int{wantE, wantK}, [2]int{entries, keys})
			}
		}
	}
	for k, byStart := range m {
		if len(byStart) == 0 {
			delete(m, k)
		}
	}
	return m
}

// checkSliced asserts that the subtasks' Sliced hold exactly m.
func checkSliced(t *testing.T, bs []*KeyedBackend, ss []*Sliced[int64], m slicedModel) {
	t.Helper()
	got := slicedModel{}
	entries, keys := 0, 0
	for i, s := range ss {
		require.True(t, slices.IsSorted(s.Starts()))
		for _, start := range s.Starts() {
			s.Slice(start).Range(func(k string, v int64) bool {
				require.Equal(t, bs[i], owner(bs, []byte(k)), "key %q on its subtask", k)
				if got[k] == nil {
					got[k] = map[int64]int64{}
				}
				got[k][start] = v
				return true
			})
		}
		entries += s.Len()
		keys += s.NumKeys()
	}
	require.Equal(t, m, got)
	n := 0
	for _, byStart := range m {
		n += len(byStart)
	}
	require.Equal(t, [2]int{n, len(m)}, [2]int{entries, keys})
}

// TestSlicedMatchesModelAndRestoresAsMap: a Sliced holds what its puts and
// drops leave; its snapshot restores at other parallelisms, as a Sliced and
// as a Map[int64, V] (the snapshot is the same), and a Map's restores as a
// Sliced.
func TestSlicedMatchesModelAndRestoresAsMap(t *testing.T) {
	const maxPar = 64
	old := keyedSubtasks(maxPar, 2)
	ss := make([]*Sliced[int64], 2)
	for i, b := range old {
		var err error
		ss[i], err = NewSliced[int64](b, "panes", Int64Codec{})
		require.NoError(t, err)
	}
	m := randomSliced(t, old, ss)
	checkSliced(t, old, ss, m)
	snaps := snapshotAll(t, nil, old)

	for _, par := range []int{1, 3, 7} {
		t.Run(fmt.Sprintf("sliced-2-to-%d", par), func(t *testing.T) {
			nbs := keyedSubtasks(maxPar, par)
			ns := make([]*Sliced[int64], par)
			for i, b := range nbs {
				b.Restore(snaps)
				var err error
				ns[i], err = NewSliced[int64](b, "panes", Int64Codec{})
				require.NoError(t, err)
			}
			checkSliced(t, nbs, ns, m)
		})
	}
	t.Run("as-map-and-back", func(t *testing.T) {
		nbs := keyedSubtasks(maxPar, 3)
		for _, b := range nbs {
			b.Restore(snaps)
			mp, err := NewMap[int64, int64](b, "panes", Int64Codec{}, Int64Codec{})
			require.NoError(t, err)
			for k, byStart := range m {
				if owner(nbs, []byte(k)) != b {
					continue
				}
				b.SetCurrentKey([]byte(k))
				got := map[int64]int64{}
				mp.Range(func(start, v int64) bool { got[start] = v; return true })
				require.Equal(t, byStart, got, "key %q", k)
			}
		}
		back := keyedSubtasks(maxPar, 2)
		bs := make([]*Sliced[int64], 2)
		msnaps := snapshotAll(t, nil, nbs)
		for i, b := range back {
			b.Restore(msnaps)
			var err error
			bs[i], err = NewSliced[int64](b, "panes", Int64Codec{})
			require.NoError(t, err)
		}
		checkSliced(t, back, bs, m)
	})
}
