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
		f.Add([]byte(rec), uint8(0), uint8(0), uint8(4))
		f.Add([]byte(rec), uint8(0xff), uint8(1), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, fields, from, room uint8) {
		shape := fastShape(fields)
		// Start at each key the record has, and at an arbitrary index.
		starts := []int{int(from) % (len(data) + 1)}
		for i := range data {
			if data[i] == '"' && (i == 1 || i > 0 && data[i-1] == ',') {
				starts = append(starts, i)
			}
		}
		for pos, i := range starts {
			pos %= len(shape)
			got := make([]found, int(room)%8, int(room)%8+int(room)%5)
			want := make([]found, len(got), cap(got))
			n1, p1, c1, e1 := fastScan(data, i, pos, shape, got[len(got):])
			n2, p2, c2, e2 := fastScanGo(data, i, pos, shape, want[len(want):])
			require.Equal(t, []any{n2, p2, c2, e2}, []any{n1, p1, c1, e1}, "%q from %d (position %d)", data, i, pos)
			require.Equal(t, want[:cap(want)], got[:cap(got)], "%q from %d (position %d)", data, i, pos)
		}
	})
}
