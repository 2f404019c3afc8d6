package nats

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzStateDecoders feeds arbitrary items to every decoder of the NATS
// connector's state (bookmark positions of both versions, sink sequences
// of both formats): an error, never a panic.
func FuzzStateDecoders(f *testing.F) {
	f.Add(position{stream: "orders", next: 42}.encode())
	f.Add(position{stream: "orders", at: time.Unix(5, 0)}.encode())
	f.Add(append(binary.AppendVarint(binary.AppendUvarint([]byte{1}, 3001), 0), "orders"...))
	f.Add(publisher{subtask: 1, seq: 9}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := decodePosition(b); err == nil {
			again, err := decodePosition(p.encode())
			require.NoError(t, err)
			require.Equal(t, p.next, again.next)
			require.Equal(t, p.stream, again.stream)
			require.True(t, p.at.Equal(again.at))
		}
		if p, err := decodePublisher(b, false); err == nil {
			again, err := decodePublisher(p.encode(), false)
			require.NoError(t, err)
			require.Equal(t, p, again)
		}
		_, _ = decodePublisher(b, true)
	})
}
