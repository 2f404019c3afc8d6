package datagen

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// Old snapshots hold the splits without a version byte, under their old
// list name; they restore like new ones.
func TestLegacySplitDecodes(t *testing.T) {
	legacy := binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(nil, 1), 2), 6040)
	sp, err := decodeLegacySplit(legacy)
	require.NoError(t, err)
	require.Equal(t, split{id: 1, of: 2, next: 6040}, sp)
	sp, err = decodeSplit(split{id: 1, of: 2, next: 6040}.encode())
	require.NoError(t, err)
	require.Equal(t, split{id: 1, of: 2, next: 6040}, sp)
	_, err = decodeSplit(split{id: 2, of: 2}.encode())
	require.ErrorContains(t, err, "split 2 of 2")
}

// FuzzStateDecoders feeds arbitrary items to every decoder of datagen's
// state: an error, never a panic, and what decodes survives a
// round trip.
func FuzzStateDecoders(f *testing.F) {
	f.Add(split{id: 0, of: 3, next: 9}.encode())
	f.Add(binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(nil, 1), 2), 7))
	f.Fuzz(func(t *testing.T, b []byte) {
		if sp, err := decodeSplit(b); err == nil {
			again, err := decodeSplit(sp.encode())
			require.NoError(t, err)
			require.Equal(t, sp, again)
		}
		_, _ = decodeLegacySplit(b)
	})
}
