package datagen

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/connectors/internal/splits"
)

// Old snapshots hold the splits without a version byte, under their old
// list name; they restore like new ones.
func TestLegacySplitDecodes(t *testing.T) {
	legacy := binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(nil, 1), 2), 6040)
	sp, err := decodeLegacySplit(legacy)
	require.NoError(t, err)
	require.Equal(t, splits.Split{ID: 1, Of: 2, Next: 6040}, sp)
	sp, err = decodeSplit(splits.Split{ID: 1, Of: 2, Next: 6040}.Encode())
	require.NoError(t, err)
	require.Equal(t, splits.Split{ID: 1, Of: 2, Next: 6040}, sp)
	_, err = decodeSplit(splits.Split{ID: 2, Of: 2}.Encode())
	require.ErrorContains(t, err, "split 2 of 2")
}

// FuzzStateDecoders feeds arbitrary items to every decoder of datagen's
// state: an error, never a panic, and what decodes survives a
// round trip.
func FuzzStateDecoders(f *testing.F) {
	f.Add(splits.Split{ID: 0, Of: 3, Next: 9}.Encode())
	f.Add(binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(nil, 1), 2), 7))
	f.Fuzz(func(t *testing.T, b []byte) {
		if sp, err := decodeSplit(b); err == nil {
			again, err := decodeSplit(sp.Encode())
			require.NoError(t, err)
			require.Equal(t, sp, again)
		}
		_, _ = decodeLegacySplit(b)
	})
}
