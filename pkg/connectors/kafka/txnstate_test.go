package kafka

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/state"
)

var samplePool = poolEntry{Prefix: "p", Subtask: 2, Size: 3, Pending: []committable{{Checkpoint: 7, ID: "p-2-1",
	ProducerID: 4000, Epoch: 3, Records: 12, Topic: "out", First: []partitionOffset{{0, 10}, {5, 1 << 33}}}}}

// The pool entry goes through state.Encoder in the format that was written
// by hand before (version 1): savepoints of either restore alike.
func TestPoolEntryEncodingIsVersionOne(t *testing.T) {
	handWritten := []byte{0x1, 0x1, 0x70, 0x2, 0x3, 0x1, 0xe, 0x5, 0x70, 0x2d, 0x32, 0x2d, 0x31, 0xc0, 0x3e, 0x6,
		0x18, 0x3, 0x6f, 0x75, 0x74, 0x2, 0x0, 0x14, 0xa, 0x80, 0x80, 0x80, 0x80, 0x40}
	require.Equal(t, handWritten, samplePool.encode())
	got, err := decodePoolEntry(handWritten)
	require.NoError(t, err)
	require.Equal(t, samplePool, got)
	empty, err := decodePoolEntry(poolEntry{Prefix: "q", Size: 1}.encode())
	require.NoError(t, err)
	require.Equal(t, poolEntry{Prefix: "q", Size: 1}, empty)
}

// A damaged pool entry is reported as corrupt state of the sink's
// transactions, never decoded into a wrong pool.
func TestDamagedPoolEntryIsCorruptState(t *testing.T) {
	good := samplePool.encode()
	withByte := func(i int, v byte) []byte {
		b := append([]byte(nil), good...)
		b[i] = v
		return b
	}
	for name, b := range map[string][]byte{
		"empty":        nil,
		"truncated":    good[:len(good)-1],
		"trailing":     append(append([]byte(nil), good...), 0),
		"pool too big": withByte(4, 0xff),
		"prefix len":   withByte(1, 0x7f),
	} {
		_, err := decodePoolEntry(b)
		require.ErrorIs(t, err, state.ErrCorrupt, name)
		require.ErrorContains(t, err, "kafka sink transactions: corrupt state", name)
	}
	_, err := decodePoolEntry(withByte(0, 2))
	require.ErrorContains(t, err, "kafka sink transactions: format version 2 is not one this flinkgo reads")
}
