package nexmark

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitRoundTrip(t *testing.T) {
	sp, err := decodeSplit(split{id: 1, of: 2, next: 6041}.encode())
	require.NoError(t, err)
	require.Equal(t, split{id: 1, of: 2, next: 6041}, sp)
	_, err = decodeSplit(split{id: 2, of: 2}.encode())
	require.ErrorContains(t, err, "split 2 of 2")
}

// FuzzStateDecoders feeds arbitrary items to the decoder of the source's
// positions: an error, never a panic, and what decodes survives a round
// trip.
func FuzzStateDecoders(f *testing.F) {
	f.Add(split{id: 0, of: 3, next: 9}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if sp, err := decodeSplit(b); err == nil {
			again, err := decodeSplit(sp.encode())
			require.NoError(t, err)
			require.Equal(t, sp, again)
		}
	})
}
