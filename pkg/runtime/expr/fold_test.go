package expr

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

var accNumbers = []string{
	"0", "-0", "1", "-7", "100000", "999999999999999", "-999999999999999", "1000000000000000",
	"1234567890123456", "12345678901234567", "123456789012345678", "1234567890123456789",
	"12345678901234567890", "1.5", "-0.25", "1e+06", "1e+15", "1e+21", "1.234567890123456e+15",
	"1e-07", "2.5e-05", "1e300", "9007199254740993",
}

// decodeAcc reads an accumulator's member as the JSON codec does
// (encoding/json and Normalize).
func TestDecodeAccAgreesWithTheJSONCodec(t *testing.T) {
	for _, raw := range append(accNumbers, `"x"`, `"é"`, "true", "false", "null") {
		var v any
		require.NoError(t, json.Unmarshal([]byte(raw), &v), raw)
		want := Normalize(v)
		got, ok := decodeAcc([]byte(raw))
		require.True(t, ok, raw)
		require.Equal(t, want, got.any(), raw)
	}
}

// What a fold writes reads back as what the VM computed exactly when
// exactNative (and ExactJSON, its rule for the VM's values) says so.
func TestExactAccumulatorValues(t *testing.T) {
	var vals []nval
	for _, raw := range accNumbers {
		v, ok := decodeRaw([]byte(raw))
		require.True(t, ok)
		vals = append(vals, v)
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			vals = append(vals, floatVal(f))
		}
	}
	vals = append(vals, floatVal(math.NaN()), floatVal(math.Inf(1)), floatVal(math.Copysign(0, -1)),
		nval{}, boolVal(true), nval{k: nStr, s: "plain"})
	for _, v := range vals {
		b, ok := appendNative(nil, v)
		require.True(t, ok)
		back, ok := decodeAcc(b)
		require.True(t, ok)
		same := back.k == v.k && back.any() == v.any()
		require.Equal(t, same, exactNative(v), "%#v written %s read %#v", v, b, back)
		require.Equal(t, same, ExactJSON(map[string]any{"x": v.any()}), "%#v", v)
		if canonical(b) && v.k != nFloat { // a record's member, as decodeRaw reads it
			require.Equal(t, same, exactRaw(b), "%s", b)
		}
	}
	require.False(t, ExactJSON(map[string]any{"x": int64(1)}), "an int64 reads back as an int")
	require.False(t, ExactJSON(map[string]any{"x": map[string]any{}}), "nested values are left to the VM")
	require.False(t, ExactJSON(map[string]any{"x": "\xff"}), "invalid UTF-8 is replaced by encoding/json")
	require.True(t, ExactJSON(map[string]any{"x": "é<&>\n", "y": 1.5, "z": nil}))
	require.False(t, ExactJSON(1))
}
