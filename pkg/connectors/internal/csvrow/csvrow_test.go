package csvrow

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseAll parses data fed in pieces of step bytes (as a reader filling
// its buffer would), returning each record's fields as JSON values.
func parseAll(t *testing.T, data string, delim byte, step int) []string {
	t.Helper()
	p := Parser{Delim: delim}
	var out []string
	have := 0
	start := 0
	for start < len(data) {
		atEOF := have >= len(data)
		n, err := p.Next([]byte(data[start:have]), atEOF)
		if err == ErrNeedMore {
			have = min(have+step, len(data))
			continue
		}
		require.NoError(t, err)
		start += n
		if p.Blank() {
			continue
		}
		row := "["
		for i := 0; i < p.Len(); i++ {
			v, q := p.Field(i)
			if i > 0 {
				row += ","
			}
			row += string(AppendValue(nil, v, q, true))
		}
		out = append(out, row+"]")
	}
	return out
}

func TestParserQuotesCommasNewlines(t *testing.T) {
	data := "a,b,c\r\n" +
		`"x, y","say ""hi""","line1` + "\nline2\"\n" +
		`1,,""` + "\n" +
		"\n" +
		"true,-2.5e3,007\n" +
		`"",null,"12"`
	want := []string{`["a","b","c"]`, `["x, y","say \"hi\"","line1\nline2"]`, `[1,null,""]`,
		`[true,-2.5e3,"007"]`, `["","null","12"]`}
	for _, step := range []int{1, 2, 3, 7, 1000} {
		require.Equal(t, want, parseAll(t, data, ',', step), "step %d", step)
	}
	require.Equal(t, []string{`["a;b","c"]`}, parseAll(t, "\"a;b\";c", ';', 1))
}

func TestParserRefusesBadQuoting(t *testing.T) {
	p := Parser{Delim: ','}
	_, err := p.Next([]byte(`"open`), true)
	require.ErrorContains(t, err, "not closed")
	_, err = p.Next([]byte(`"a"b,c`+"\n"), true)
	require.ErrorContains(t, err, "after the closing quote")
}

// A JSON object written as a row and parsed back is the same object, its
// members' types included, whatever its strings hold.
func TestRowRoundTrip(t *testing.T) {
	cols := []string{"s", "n", "b", "z", "e", "numstr", "boolstr", "nested", "missing", "uni"}
	in := `{"s":"a, \"quoted\"\nnew line","n":-1.5,"b":true,"z":null,"e":"","numstr":"42","boolstr":"false",` +
		`"nested":{"k":[1,"x,y"]},"extra":1,"uni":"h\u00e9 \t tab"}`
	r := NewRow(cols, ',')
	row, err := r.Append(nil, []byte(in))
	require.NoError(t, err)
	got := parseAll(t, string(Header(nil, cols, ','))+string(row), ',', 5)
	require.Len(t, got, 2)
	var vals []any
	require.NoError(t, json.Unmarshal([]byte(got[1]), &vals))
	require.Equal(t, []any{"a, \"quoted\"\nnew line", -1.5, true, nil, "", "42", "false", `{"k":[1,"x,y"]}`, nil, "hé \t tab"}, vals)

	_, err = r.Append(nil, []byte(`[1,2]`))
	require.ErrorIs(t, err, ErrNotObject)
	_, err = r.Append(nil, []byte(`not json`))
	require.ErrorIs(t, err, ErrNotObject)
	tab, err := NewRow([]string{"a", "b"}, '\t').Append(nil, []byte(`{"b":"x\ty","a":"p"}`))
	require.NoError(t, err)
	require.Equal(t, "p\t\"x\ty\"\n", string(tab))
	require.False(t, strings.Contains(string(Header(nil, []string{"a,b"}, ',')), "a,b\n"))
}

func TestIsNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "12", "1.5", "1e5", "-2.5E-3"} {
		require.True(t, IsNumber([]byte(s)), s)
	}
	for _, s := range []string{"", "-", "01", "1.", ".5", "1e", "+1", "0x1", "1 "} {
		require.False(t, IsNumber([]byte(s)), s)
	}
}
