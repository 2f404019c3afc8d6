package state

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// DeleteWhere removes the values it is told to across every key group,
// keeps the others (as changed in place), and leaves the current key as it
// was.
func TestValueDeleteWhere(t *testing.T) {
	b := NewKeyedBackend(16, KeyGroupRange{0, 16})
	v, err := NewValue(b, "v", Codec[*int64](ptrCodec{}))
	require.NoError(t, err)
	for i := range int64(100) {
		v.SetKey(fmt.Appendf(nil, "k%d", i))
		n := i
		v.Put(&n)
	}
	v.SetKey([]byte("k7"))
	require.Equal(t, 50, v.DeleteWhere(func(n *int64) bool {
		if *n%2 == 0 {
			return true
		}
		*n *= 10
		return false
	}))
	require.Equal(t, int64(50), b.NumKeys())
	require.Equal(t, []byte("k7"), b.CurrentKey())
	got, ok := v.Get()
	require.True(t, ok)
	require.Equal(t, int64(70), *got, "changed in place")
	for i := range 100 {
		v.SetKey(fmt.Appendf(nil, "k%d", i))
		_, ok := v.Get()
		require.Equal(t, i%2 == 1, ok, "key %d", i)
	}
	require.Zero(t, v.DeleteWhere(func(*int64) bool { return false }))
}

type ptrCodec struct{}

func (ptrCodec) Append(dst []byte, n *int64) []byte { return Int64Codec{}.Append(dst, *n) }
func (ptrCodec) Decode(b []byte) (*int64, error) {
	n, err := Int64Codec{}.Decode(b)
	return &n, err
}
