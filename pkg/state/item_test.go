package state

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestItemRoundTrip(t *testing.T) {
	e := NewEncoder(2)
	e.Uvarint(1 << 40)
	e.Varint(-7)
	e.Byte('P')
	e.Bool(true)
	e.Bytes([]byte{0, 1, 2})
	e.String("topic")
	e.Varint(12)
	d := NewDecoder("test item", e.Encoded(), 2)
	require.Equal(t, byte(2), d.Version())
	require.Equal(t, uint64(1<<40), d.Uvarint())
	require.Equal(t, int64(-7), d.Varint())
	require.Equal(t, byte('P'), d.Byte())
	require.True(t, d.Bool())
	require.Equal(t, []byte{0, 1, 2}, d.Bytes())
	require.Equal(t, "topic", d.String())
	require.Equal(t, 12, d.Int(0, 100))
	require.NoError(t, d.Finish())
}

func TestItemErrors(t *testing.T) {
	item := func(v byte, fill func(*Encoder)) []byte {
		e := NewEncoder(v)
		fill(e)
		return e.Encoded()
	}
	good := item(1, func(e *Encoder) { e.String("abc"); e.Varint(5) })
	for _, c := range []struct {
		name string
		b    []byte
		read func(*Decoder)
		want string
	}{
		{"empty", nil, func(*Decoder) {}, "empty item"},
		{"newer version", item(3, func(*Encoder) {}), func(*Decoder) {}, "format version 3 is not one this flinkgo reads (1 to 1)"},
		{"version zero", []byte{0, 1}, func(*Decoder) {}, "format version 0"},
		{"truncated string", good[:3], func(d *Decoder) { _ = d.String() }, "truncated bytes"},
		{"truncated number", good[:5], func(d *Decoder) { _ = d.String(); d.Varint() }, "truncated number"},
		{"trailing bytes", append(append([]byte(nil), good...), 9), func(d *Decoder) { _ = d.String(); d.Varint() }, "1 unexpected trailing bytes"},
		{"out of range", good, func(d *Decoder) { _ = d.String(); d.Int(0, 4) }, "value 5 outside 0..4"},
		{"not a bool", item(1, func(e *Encoder) { e.Byte(7) }), func(d *Decoder) { d.Bool() }, "not a bool"},
	} {
		d := NewDecoder("test item", c.b, 1)
		c.read(d)
		err := d.Finish()
		require.ErrorContains(t, err, c.want, c.name)
		require.ErrorContains(t, err, "test item: ", c.name)
		if c.name != "newer version" && c.name != "version zero" {
			require.True(t, errors.Is(err, ErrCorrupt), c.name)
		}
	}
	// The first error sticks: later reads return zero values.
	d := NewDecoder("x", good[:2], 1)
	require.Equal(t, "", d.String())
	require.Equal(t, int64(0), d.Varint())
	require.ErrorContains(t, d.Finish(), "truncated bytes")
}
