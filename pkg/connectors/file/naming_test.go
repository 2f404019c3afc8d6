package file

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNamingRoundTrip(t *testing.T) {
	for _, n := range []naming{{Prefix: "part"}, {Prefix: "my-part", Suffix: ".txt"}, {Prefix: "p", Suffix: "-0"}} {
		final := n.Final(12, 345)
		idx, part, hidden, ok := n.Parse(final)
		require.True(t, ok, final)
		require.Equal(t, []any{12, int64(345), false}, []any{idx, part, hidden})
		h := n.Hidden(3, 7, "abc")
		require.Equal(t, n.Final(3, 7), hiddenFinal(h))
		idx, part, hidden, ok = n.Parse(h)
		require.True(t, ok, h)
		require.Equal(t, []any{3, int64(7), true}, []any{idx, part, hidden})
	}
}

func TestNamingIgnoresOtherFiles(t *testing.T) {
	n := naming{Prefix: "part", Suffix: ".txt"}
	for _, name := range []string{"part-0-1", "part-0-1.txt.crc", "part-a-1.txt", "part-0-1-2.txt", "part--1.txt",
		".part-0-1.txt", ".part-0-1.txt.inprogress", "other-0-1.txt", "_SUCCESS", ".part-x-1.txt.inprogress.a",
		"part-0-99999999999999999999.txt"} {
		_, _, _, ok := n.Parse(name)
		require.False(t, ok, name)
	}
}
