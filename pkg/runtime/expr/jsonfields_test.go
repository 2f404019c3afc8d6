package expr

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestFieldsTable(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]any
	}{
		{`{}`, map[string]any{}},
		{` { } `, map[string]any{}},
		{`{"idx": 1}`, map[string]any{"idx": 1}},
		{`{"idx":-42,"f":1.5,"e":1e3,"big":123456789012345678}`, map[string]any{"idx": -42, "f": 1.5, "e": 1000.0, "big": 123456789012345678}},
		{`{"s":"a\"b\u00e9","t":true,"n":null,"x":false}`, map[string]any{"s": "a\"bé", "t": true, "n": nil, "x": false}},
		{`{"o":{"a":[1,2,{"b":"}"}]},"after":1}`, map[string]any{"o": map[string]any{"a": []any{1, 2, map[string]any{"b": "}"}}}, "after": 1}},
		{`{"a\u0062":1}`, map[string]any{"ab": 1}},
		{`{"dup":1,"dup":2}`, map[string]any{"dup": 2}},
		{"{\n\t\"a\" :\r\n 1 \n}", map[string]any{"a": 1}},
		{`{"huge":1e400}`, nil}, // out of float64 range: an error, as encoding/json says
	} {
		got := map[string]any{}
		err := fields([]byte(c.in), nil, got)
		if c.want == nil {
			require.Error(t, err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}

func TestFieldsWantOnlySome(t *testing.T) {
	got := map[string]any{}
	require.NoError(t, fields([]byte(`{"a":1,"b":{"deep":[1,2]},"c":"x"}`), map[string]bool{"c": true}, got))
	require.Equal(t, map[string]any{"c": "x"}, got)
}

func TestFieldsRejectsNonObjects(t *testing.T) {
	for _, in := range []string{``, ` `, `[]`, `1`, `"s"`, `null`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`,
		`{a:1}`, `{"a":1}x`, `{} {}`, `{"a":"unterminated}`, `{"a":[1,2}`, `{"a":tru}`, `{"a":1.2.3}`} {
		require.Error(t, fields([]byte(in), nil, map[string]any{}), "%q", in)
	}
}

// FuzzJSONFields checks the scanner against encoding/json: every object
// encoding/json accepts yields the same members (numbers compared by
// value: the scanner keeps integers as int), and no input panics.
func FuzzJSONFields(f *testing.F) {
	for _, s := range []string{`{}`, `{"idx": 1}`, `{"a":"x\"y","b":[1,{"c":null}],"d":-1.5e3}`, `{"a":{"b":{"c":[]}}}`,
		`{"u":"\u00e9\ud83d\ude00"}`, `{"n":123456789012345678}`, `[1]`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := map[string]any{}
		err := fields(data, nil, got)
		var want map[string]any
		if json.Unmarshal(data, &want) != nil || want == nil || !utf8.Valid(data) {
			return // not an object encoding/json accepts (or not UTF-8, which it rewrites)
		}
		require.NoError(t, err, "%q", data)
		require.Len(t, got, len(want), "%q", data)
		for k, w := range want {
			requireSameJSON(t, w, got[k], data)
		}
	})
}

// requireSameJSON compares a value decoded by encoding/json with the
// scanner's.
func requireSameJSON(t *testing.T, want, got any, data []byte) {
	t.Helper()
	switch w := want.(type) {
	case float64:
		var g float64
		switch x := got.(type) {
		case int:
			g = float64(x)
		case float64:
			g = x
		default:
			t.Fatalf("%q: number %v decoded as %T", data, w, got)
		}
		require.True(t, g == w || (math.IsNaN(g) && math.IsNaN(w)), "%q: %v != %v", data, g, w)
	case map[string]any:
		g, ok := got.(map[string]any)
		require.True(t, ok, "%q: object decoded as %T", data, got)
		require.Len(t, g, len(w))
		for k, v := range w {
			requireSameJSON(t, v, g[k], data)
		}
	case []any:
		g, ok := got.([]any)
		require.True(t, ok, "%q: array decoded as %T", data, got)
		require.Len(t, g, len(w))
		for i := range w {
			requireSameJSON(t, w[i], g[i], data)
		}
	default:
		require.Equal(t, want, got, "%q", data)
	}
}

// digits8 is eight digits, exhaustively over one byte at each place among
// seven digits.
func TestDigits8(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			b := []byte("01234567")
			b[pos] = byte(c)
			want := c >= '0' && c <= '9'
			if got := digits8(le64(b)); got != want {
				t.Fatalf("%q: digits8 %v, want %v", b, got, want)
			}
		}
	}
}

// parseInt reads what strconv.Atoi reads, for up to 18 digits, and refuses
// the rest: every length, digits and non-digits at every place.
func TestParseIntIsAtoi(t *testing.T) {
	cases := []string{"", "-", "0", "-0", "7", "12345678", "123456789", "1767225600000", "999999999999999999",
		"1000000000000000000", "-999999999999999999", "01", "1.5", "1e3", " 1", "1 ", "+1", "--1"}
	x := uint64(3)
	for n := range 20 {
		for range 200 {
			b := []byte{}
			for range n {
				x = x*6364136223846793005 + 1442695040888963407
				c := byte('0' + x>>60%10)
				if x>>40%16 == 0 {
					c = byte(x >> 48) // now and then not a digit
				}
				b = append(b, c)
			}
			cases = append(cases, string(b), "-"+string(b))
		}
	}
	for _, s := range cases {
		got, ok := parseInt([]byte(s))
		digits := strings.TrimPrefix(s, "-")
		want, err := strconv.Atoi(s)
		wantOK := err == nil && len(digits) <= 18 && !strings.HasPrefix(s, "+") && digits != "" &&
			strings.Trim(digits, "0123456789") == ""
		require.Equal(t, wantOK, ok, "%q", s)
		if ok {
			require.Equal(t, want, got, "%q", s)
		}
	}
}

// A number a float64 cannot hold is valid JSON syntax: CheckJSON (the
// sources' check under onDecodeError) refuses it saying so, and so does
// reading it, instead of "not a JSON object".
func TestNumberOutOfRange(t *testing.T) {
	for in, want := range map[string]string{
		`{"amount":1e400}`:                        "number 1e400 is out of the range of a 64-bit float",
		`{"a":{"b":[1,-2E+999]}}`:                 "number -2E+999 is out of the range",
		`{"s":"1e400","n":1e400}`:                 "number 1e400 is out of",
		`not json`:                                "value is not valid JSON",
		`{"amount":1e-400,"s":"e","x":2e3}`:       "",
		`{"idx": 1}`:                              "",
		`{"big": 123456789012345678901234567890}`: "",
	} {
		err := CheckJSON([]byte(in))
		if want == "" {
			require.NoError(t, err, in)
			continue
		}
		require.ErrorContains(t, err, want, in)
	}
	for in, want := range map[string]string{
		`{"amount":1e400}`:        "number 1e400 is out of the range of a 64-bit float",
		`{"amount":{"x":-1e999}}`: "number -1e999 is out of the range",
	} {
		err := fields([]byte(in), map[string]bool{"amount": true}, map[string]any{})
		require.ErrorContains(t, err, want, in)
	}
}

// BenchmarkCheckJSON: what the sources pay per record for the number range
// check on top of json.Valid (sub-benchmark valid is json.Valid alone).
func BenchmarkCheckJSON(b *testing.B) {
	rec := []byte(`{"idx": 123456, "user": "u17", "amount": 73.25, "ts": 1767225600412, "note": "some text here", "score": 1.5e3}`)
	b.Run("valid", func(b *testing.B) {
		for range b.N {
			_ = json.Valid(rec)
		}
	})
	b.Run("check", func(b *testing.B) {
		for range b.N {
			_ = CheckJSON(rec)
		}
	})
}
