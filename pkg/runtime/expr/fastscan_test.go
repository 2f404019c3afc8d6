package expr

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The offsets fastscan_amd64.s reads memberShape and writes found at.
func TestFastScanLayout(t *testing.T) {
	var sh memberShape
	require.Equal(t, []uintptr{80, 16, 24, 48, 72},
		[]uintptr{unsafe.Sizeof(sh), unsafe.Offsetof(sh.field), unsafe.Offsetof(sh.w), unsafe.Offsetof(sh.mask), unsafe.Offsetof(sh.plen)})
	var f found
	require.Equal(t, []uintptr{48, 0, 8, 16, 24, 32, 40},
		[]uintptr{unsafe.Sizeof(f), unsafe.Offsetof(f.field), unsafe.Offsetof(f.keyAt), unsafe.Offsetof(f.keyEnd),
			unsafe.Offsetof(f.valAt), unsafe.Offsetof(f.valEnd), unsafe.Offsetof(f.canon)})
}

// fastShape is a shape of the keys of bid, some of them fields, one
// long, one not matching.
func fastShape(fields uint8) []memberShape {
	var shape []memberShape
	for k, key := range []string{"event_type", "auction", "bidder", "price", "channel", "url", "dateTime", "extra", "a", "b", "a_key_longer_than_the_words"} {
		f := -1
		if fields>>(k%8)&1 != 0 {
			f = k
		}
		shape = append(shape, newShape(key, f))
	}
	return shape
}

// FuzzFastScan: fastScan (assembly on amd64) gives fastScanGo's answer,
// over any record, from any position, with any room in out; and what it
// hands over is what scanMembers would (checked by the other fuzz tests
// through it). Run by make fuzz.
func FuzzFastScan(f *testing.F) {
	for _, rec := range append(append(append([]string{}, nativeRecords...), dupRecords...), bid,
		`{"event_type":2,"a":01,"b":"x\"y","auction":123456789012345678901,"bidder":"é"}`,
		`{"a":1,"b":2}`, `{"a":"abcdefghijklmnopqrstuvwx","b":0}`, `{"a":1 ,"b":2}`) {
		for _, fields := range []uint8{0, 0xff, 0xf0, 0x0f, 0xaa} {
			f.Add([]byte(rec), fields, uint8(0), uint8(16))
		}
		f.Add([]byte(rec), uint8(0xff), uint8(1), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, fields, from, room uint8) {
		shape := fastShape(fields)
		// Start at each key the record has (at its position: the keys of
		// bid are the shape's), and at an arbitrary index and position.
		type start struct{ i, pos int }
		starts := []start{{int(from) % (len(data) + 1), int(from) % len(shape)}}
		for i := range data {
			if data[i] == '"' && (i == 1 || i > 0 && data[i-1] == ',') {
				starts = append(starts, start{i, len(starts) - 1})
			}
		}
		for _, st := range starts {
			i, pos := st.i, st.pos%len(shape)
			got := make([]found, int(room)%3, int(room)%3+int(room)%17)
			want := make([]found, len(got), cap(got))
			n1, p1, c1, e1 := fastScan(data, i, pos, shape, got[len(got):])
			n2, p2, c2, e2 := fastScanGo(data, i, pos, shape, want[len(want):])
			require.Equal(t, []any{n2, p2, c2, e2}, []any{n1, p1, c1, e1}, "%q from %d (position %d)", data, i, pos)
			require.Equal(t, want[:cap(want)], got[:cap(got)], "%q from %d (position %d)", data, i, pos)
		}
	})
}
