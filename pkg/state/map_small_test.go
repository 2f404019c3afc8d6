package state

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key's entries live in a slice up to smallMax and in a map past it: puts,
// overwrites and removes on both sides of the switch agree with a plain
// map, through a snapshot and restore too; Aux stays with the entries and
// goes with the last one.
func TestMapSmallAndLargeMatchModel(t *testing.T) {
	b := NewKeyedBackend(16, AllKeyGroups(16))
	m, err := NewMap[int64, string](b, "m", Int64Codec{}, StringCodec{})
	require.NoError(t, err)
	model := map[string]map[int64]string{}
	r := rand.New(rand.NewSource(3))
	keys := []string{"a", "b", "c", "d"}
	for step := 0; step < 5000; step++ {
		k := keys[r.Intn(len(keys))]
		b.SetCurrentKey([]byte(k))
		uk := int64(r.Intn(3 + 12*(step/1000%2))) // phases of few and of many user keys
		if model[k] == nil {
			model[k] = map[int64]string{}
		}
		if r.Intn(3) == 0 {
			m.Remove(uk)
			delete(model[k], uk)
		} else {
			v := itoa(int64(step))
			m.Put(uk, v)
			model[k][uk] = v
		}
		require.Equal(t, len(model[k]), m.Len())
		got := map[int64]string{}
		m.Range(func(uk int64, v string) bool { got[uk] = v; return true })
		if len(model[k]) == 0 {
			require.Empty(t, got)
			require.Nil(t, m.Aux(), "aux went with the last entry")
		} else {
			require.Equal(t, model[k], got)
			m.SetAux(k)
		}
	}
	snap := snapshotAll(t, nil, []*KeyedBackend{b})[0]
	nb := NewKeyedBackend(16, AllKeyGroups(16))
	nb.Restore([]*Snapshot{snap})
	rm, err := NewMap[int64, string](nb, "m", Int64Codec{}, StringCodec{})
	require.NoError(t, err)
	for _, k := range keys {
		nb.SetCurrentKey([]byte(k))
		require.Nil(t, rm.Aux(), "aux is not snapshotted")
		for uk, v := range model[k] {
			got, ok := rm.Get(uk)
			require.True(t, ok)
			require.Equal(t, v, got)
		}
		require.Equal(t, len(model[k]), rm.Len())
	}
}

// Setting the current key again (another slice, same bytes) keeps the
// states' lookups; a buffer reused for another key is looked up anew.
func TestSetCurrentKeySameAndReusedBuffer(t *testing.T) {
	b := NewKeyedBackend(16, AllKeyGroups(16))
	m, err := NewMap[int64, string](b, "m", Int64Codec{}, StringCodec{})
	require.NoError(t, err)
	b.SetCurrentKey([]byte("a"))
	m.Put(1, "a1")
	gen := b.keyGen
	b.SetCurrentKey([]byte("a"))
	require.Equal(t, gen, b.keyGen, "same key: lookups kept")
	v, _ := m.Get(1)
	require.Equal(t, "a1", v)
	buf := []byte("b")
	b.SetCurrentKey(buf)
	m.Put(1, "b1")
	buf[0] = 'c'
	b.SetCurrentKey(buf)
	_, ok := m.Get(1)
	require.False(t, ok, "c has no entry")
	require.Equal(t, KeyGroup([]byte("c"), 16)-b.rng.Start, b.curKG)
	b.SetCurrentKey([]byte("b"))
	v, _ = m.Get(1)
	require.Equal(t, "b1", v)
}
