package kafka

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzStateDecoders feeds arbitrary items to every decoder of the Kafka
// connector's state (the source's positions, the transactional sink's
// pools): an error, never a panic, and what decodes survives a round trip.
func FuzzStateDecoders(f *testing.F) {
	f.Add(position{tp: topicPartition{"in", 3}, next: 5, stop: noStop}.encode())
	f.Add(samplePool.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := decodePosition(b); err == nil {
			again, err := decodePosition(p.encode())
			require.NoError(t, err)
			require.Equal(t, p, again)
		}
		if e, err := decodePoolEntry(b); err == nil {
			again, err := decodePoolEntry(e.encode())
			require.NoError(t, err)
			require.Equal(t, e, again)
		}
	})
}
