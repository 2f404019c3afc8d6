package file

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func encode(t *testing.T, f format, size int, recs ...runtime.Record) string {
	var out bytes.Buffer
	w := bufio.NewWriterSize(&out, size)
	e := encoder{format: f}
	total := 0
	for i := range recs {
		n, err := e.write(w, &recs[i])
		require.NoError(t, err)
		total += n
	}
	require.NoError(t, w.Flush())
	require.Equal(t, out.Len(), total, "reported sizes")
	return out.String()
}

func TestFormatLine(t *testing.T) {
	require.Equal(t, "{\"idx\": 1}\nabc\n\n", encode(t, formatLine, 16,
		runtime.Record{Value: []byte(`{"idx": 1}`)}, runtime.Record{Value: []byte("abc")}, runtime.Record{}))
}

func TestFormatJSON(t *testing.T) {
	big := strings.Repeat("é\"", 300)
	got := encode(t, formatJSON, 64,
		runtime.Record{Value: []byte(`{"idx": 1}`), Key: []byte("k"), Timestamp: 1700000000123},
		runtime.Record{Value: []byte("plain \"text\"\n\x01\xff")},
		runtime.Record{Value: []byte("{\n  \"a\": [1,\n 2]\n}")},
		runtime.Record{Value: []byte(big)},
		runtime.Record{Value: []byte(" 42 ")},
	)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	require.Len(t, lines, 5, got)
	require.Equal(t, `{"value":{"idx": 1},"key":"k","timestamp":1700000000123}`, lines[0])
	require.Equal(t, `{"value":"plain \"text\"\n\u0001\ufffd","key":null,"timestamp":null}`, lines[1])
	require.Equal(t, `{"value":{"a":[1,2]},"key":null,"timestamp":null}`, lines[2])
	require.Equal(t, `{"value":42,"key":null,"timestamp":null}`, lines[4])
	for _, l := range lines {
		require.True(t, json.Valid([]byte(l)), l)
	}
	var v struct{ Value string }
	require.NoError(t, json.Unmarshal([]byte(lines[3]), &v))
	require.Equal(t, big, v.Value)
}

// A record without value (a Kafka tombstone) and one with an empty value
// differ in format json (null, ""), not in format line (an empty line
// each); see docs/values.md.
func TestFormatNullAndEmptyValues(t *testing.T) {
	null, empty := runtime.Record{Value: nil}, runtime.Record{Value: []byte{}}
	require.Equal(t, "{\"value\":null,\"key\":null,\"timestamp\":null}\n{\"value\":\"\",\"key\":null,\"timestamp\":null}\n",
		encode(t, formatJSON, 64, null, empty))
	require.Equal(t, "\n\n", encode(t, formatLine, 64, null, empty))
}

func TestFormatDoesNotAllocate(t *testing.T) {
	w := bufio.NewWriterSize(discardWriter{}, 64<<10)
	r := runtime.Record{Value: []byte(`{"idx": 12345}`), Key: []byte("key"), Timestamp: 5}
	for _, f := range []format{formatLine, formatJSON} {
		e := encoder{format: f}
		allocs := testing.AllocsPerRun(1000, func() { _, _ = e.write(w, &r) })
		require.Zero(t, allocs, f.String())
	}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
