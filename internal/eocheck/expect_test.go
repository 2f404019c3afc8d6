package eocheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDatagenLayout(t *testing.T) {
	e := Datagen(3, 1, 10) // split 0: 1 4 7 10; split 1: 2 5 8; split 2: 3 6 9
	require.Equal(t, int64(10), e.Records())
	require.Equal(t, 3, e.Splits())
	want := map[int][]int64{0: {1, 4, 7, 10}, 1: {2, 5, 8}, 2: {3, 6, 9}}
	for s, seqs := range want {
		p := e.splits[s]
		require.Equal(t, int64(len(seqs)), p.n, "split %d", s)
		for i, seq := range seqs {
			idx, ok := p.index(seq)
			require.True(t, ok)
			require.Equal(t, int64(i), idx)
		}
		_, ok := p.index(seqs[0] + 1)
		require.False(t, ok)
		_, ok = p.index(seqs[len(seqs)-1] + 3)
		require.False(t, ok)
	}
	require.Equal(t, int64(2), Datagen(4, 0, 2).Records())
	require.Equal(t, int64(0), Datagen(4, 0, 2).splits[3].n)
}

func TestFired(t *testing.T) {
	require.NoError(t, Fired(3, 3))
	require.ErrorContains(t, Fired(3, 2), "only 2 of 3")
	require.Error(t, Fired(1, 2))
	require.NoError(t, FiredAll(counts{4, 4}))
	require.Error(t, FiredAll(counts{4, 0}))
}

type counts struct{ planned, fired int }

func (c counts) Planned() (int, int) { return c.planned, c.fired }
