package jsonstring

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// encodingJSON is what encoding/json writes for s without HTML escaping:
// Append's contract.
func encodingJSON(t testing.TB, s string) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	require.NoError(t, e.Encode(s))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var cases = []string{
	"", "a", "user-1234", `"`, `\`, "\n", "\x00", "\x1f", "\x7f", "<a&b>", "\u2028\u2029",
	"café", "\xff", "a\xffb", "\xe2\x82", "k\xff\"\n", "\xc3\x28", "\xed\xa0\x80", "😀", "\xf0\x9f\x98",
	"https://www.nexmark.com/ramx/nux/jkc/item.htm?query=1", "abcdefgh\"ijklmnop", "abcdefghijklmno\\",
	strings.Repeat("x", 100) + "\t" + strings.Repeat("é", 20),
}

// Append writes what encoding/json writes, byte for byte, for strings
// that need no escape, every escape, invalid UTF-8 and the two line
// separators, at every place in words of eight.
func TestAppendIsEncodingJSON(t *testing.T) {
	for _, s := range cases {
		for pad := range 10 {
			for _, in := range []string{strings.Repeat("p", pad) + s, s + strings.Repeat("p", pad)} {
				require.Equal(t, string(encodingJSON(t, in)), string(Append(nil, in)), "%q", in)
				require.Equal(t, string(encodingJSON(t, in)), string(AppendBytes([]byte("x"), []byte(in))[1:]), "%q", in)
			}
		}
	}
	for c := range 256 {
		in := "ab" + string(rune(0)) + string([]byte{byte(c)}) + "cdefghijk"
		require.Equal(t, string(encodingJSON(t, in)), string(Append(nil, in)), "%q", in)
	}
}

// FuzzAppend: for any bytes, Append is encoding/json's output, is valid
// JSON, and decodes back to the input when it is valid UTF-8. Run by
// make fuzz.
func FuzzAppend(f *testing.F) {
	for _, s := range cases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := AppendBytes([]byte("prefix"), in)
		require.Equal(t, "prefix", string(out[:6]), "the prefix is kept")
		out = out[6:]
		require.True(t, json.Valid(out), "%q gave %q", in, out)
		require.Equal(t, string(encodingJSON(t, string(in))), string(out), "%q", in)
		var back string
		require.NoError(t, json.Unmarshal(out, &back))
		if utf8.Valid(in) {
			require.Equal(t, string(in), back)
		}
	})
}

// BenchmarkAppend is Append of the strings a window key, a Nexmark
// output and a user's text hold.
func BenchmarkAppend(b *testing.B) {
	for name, s := range map[string]string{
		"key":   "user-1234",
		"extra": "mamsqurzlrppjhzlpxnfijaipkiheafwniislokudnurgpkgerqkjrdtwftokpgggmxqzme",
		"quote": `she said "hi" and left`,
		"utf8":  "café olé, crème brûlée",
	} {
		b.Run(name, func(b *testing.B) {
			var dst []byte
			for i := 0; i < b.N; i++ {
				dst = Append(dst[:0], s)
			}
		})
	}
}
