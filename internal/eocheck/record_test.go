package eocheck

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, c := range []struct {
		split int
		seq   int64
	}{{0, 0}, {3, 1042}, {7, -5}, {1 << 20, 1<<63 - 1}} {
		line := Append(nil, c.split, c.seq)
		require.LessOrEqual(t, len(line), MaxLen)
		split, seq, err := Parse(append(line, '\n'))
		require.NoError(t, err, string(line))
		require.Equal(t, c.split, split)
		require.Equal(t, c.seq, seq)
	}
	require.Regexp(t, `^\{"split":3,"seq":1042,"crc":"[0-9a-f]{8}"\}$`, string(Append(nil, 3, 1042)))
}

func TestParseRejects(t *testing.T) {
	good := string(Append(nil, 3, 1042))
	for _, bad := range []string{
		"", "{}", `{"idx": 3}`, good[:len(good)-1], good + " ", " " + good,
		`{"split":3,"seq":1042}`, `{"split":x,"seq":1042,"crc":"00000000"}`,
		`{"split":03,"seq":1042,"crc":"00000000"}`, `{"split":3,"seq":+1042,"crc":"00000000"}`,
		`{"split":3,"seq":1042,"crc":"0000000"}`, `{"split":3,"seq":1042,"crc":"0000000G"}`,
	} {
		_, _, err := Parse([]byte(bad))
		require.ErrorIs(t, err, ErrSyntax, bad)
	}
	// A flipped digit keeps the syntax but breaks the checksum.
	flipped := []byte(good)
	flipped[len(`{"split":3,"seq":10`)] = '5'
	_, _, err := Parse(flipped)
	require.True(t, errors.Is(err, ErrChecksum), "%v", err)
}

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
