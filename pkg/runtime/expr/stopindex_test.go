package expr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// stopIndexSlow is stopIndex's contract, a byte at a time.
func stopIndexSlow(b []byte, from int) int {
	for j := from; j < len(b); j++ {
		if c := b[j]; c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			return j
		}
	}
	return len(b)
}

// stopIndex (assembly on amd64) and stopIndexGo stop where the contract
// says: every byte value at every place of every length to 50, from
// every start, after plain bytes, and random mixes; nothing outside b is
// read (each b is cut from a longer buffer whose next byte is a quote,
// and bytes before from that would stop it are not seen).
func TestStopIndexAtEveryByteAndPlace(t *testing.T) {
	buf := make([]byte, 80)
	check := func(b []byte, froms ...int) {
		t.Helper()
		for _, from := range froms {
			if from < 0 || from > len(b) {
				continue
			}
			want := stopIndexSlow(b, from)
			require.Equal(t, want, stopIndex(b, from), "%q from %d", b, from)
			require.Equal(t, want, stopIndexGo(b, from), "%q from %d", b, from)
		}
	}
	for n := 0; n <= 50; n++ {
		for i := range buf {
			buf[i] = 'a' + byte(i%26)
		}
		buf[n] = '"' // just past b: must not be seen
		for from := 0; from <= n; from++ {
			check(buf[:n], from)
		}
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				buf[at] = byte(c)
				check(buf[:n], 0, at-16, at, at+1)
			}
			buf[at] = 'x'
		}
	}
	x := uint64(3)
	for range 5000 {
		n := int(x % 70)
		for i := 0; i < n; i++ {
			x = x*6364136223846793005 + 1442695040888963407
			buf[i] = byte(x >> 56)
			if x>>40&15 != 0 {
				buf[i] = 0x20 + buf[i]%0x5f
			}
		}
		for from := 0; from <= n; from++ {
			check(buf[:n], from)
		}
	}
}

// BenchmarkStopIndex is stopIndex against stopIndexGo, over a Nexmark
// bid's url and extra.
func BenchmarkStopIndex(b *testing.B) {
	strs := [][]byte{[]byte(`https://www.nexmark.com/s_x/qzk/aov/item.htm?query=1&channel_id=361234432",`),
		[]byte(`mamsqurzlrppjhzlpxnfijaipkiheafwniislokudnurgpkgerqkjrdtwftokpgggmxqzme"}`)}
	for name, f := range map[string]func([]byte, int) int{"stopIndex": stopIndex, "stopIndexGo": stopIndexGo} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for _, s := range strs {
					if f(s, 0) != len(s)-2 {
						b.Fatal(s)
					}
				}
			}
		})
	}
}
