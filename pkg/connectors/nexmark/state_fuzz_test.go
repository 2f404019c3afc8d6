package nexmark

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/connectors/internal/splits"
)

// FuzzStateDecoders feeds arbitrary items to the decoder of the source's
// positions: an error, never a panic, and what decodes survives a round
// trip.
func FuzzStateDecoders(f *testing.F) {
	f.Add(splits.Split{ID: 0, Of: 3, Next: 9}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if sp, err := splits.Decode("nexmark split", b); err == nil {
			again, err := splits.Decode("nexmark split", sp.Encode())
			require.NoError(t, err)
			require.Equal(t, sp, again)
		}
	})
}
