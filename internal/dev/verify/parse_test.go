package verify

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseField(t *testing.T) {
	p := newParser("idx")
	tests := []struct {
		line string
		want int64
		fast bool
		ok   bool
	}{
		{`{"idx": 42}`, 42, true, true},
		{`{"idx":42}`, 42, true, true},
		{"\t{ \"idx\" :  -7 }\r", -7, true, true},
		{`{"idx": 9223372036854775807}`, math.MaxInt64, true, true},
		{`{"idx": -9223372036854775808}`, math.MinInt64, true, true},
		{`{"idx": 9223372036854775808}`, 0, false, false},
		{`{"a": 1, "idx": 3}`, 3, false, true},
		{`{"idx": 3, "a": 1}`, 3, false, true},
		{`{"idx": "3"}`, 0, false, false},
		{`{"idx": 3.0}`, 0, false, false},
		{`{"idx": null}`, 0, false, false},
		{`{"idx": 3`, 0, false, false},
		{`{"idxx": 3}`, 0, false, false},
		{`{}`, 0, false, false},
		{`null`, 0, false, false},
		{`3`, 0, false, false},
		{``, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, fast := p.fast(bytes.TrimSpace([]byte(tt.line)))
			if tt.fast {
				assert.True(t, fast, "fast path")
			}
			got, err := p.parse([]byte(tt.line))
			if !tt.ok {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseFieldNeedsEscaping(t *testing.T) {
	p := newParser(`a"b`)
	got, err := p.parse([]byte(`{"a\"b": 5}`))
	require.NoError(t, err)
	assert.Equal(t, int64(5), got)
}

func TestParseWholeLine(t *testing.T) {
	p := newParser("")
	for line, want := range map[string]int64{"0": 0, "17": 17, " -3 ": -3, "007": 7} {
		got, err := p.parse([]byte(line))
		require.NoError(t, err, line)
		assert.Equal(t, want, got, line)
	}
	for _, line := range []string{"", "-", "1.5", "1e3", "+", "x1", "99999999999999999999"} {
		_, err := p.parse([]byte(line))
		assert.Error(t, err, line)
	}
}
