package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		// Go syntax.
		{"500ms", 500 * time.Millisecond},
		{"10s", 10 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"1.5s", 1500 * time.Millisecond},
		{"0", 0},
		{"  10s  ", 10 * time.Second},
		{"36500d", 36500 * 24 * time.Hour}, // MaxDuration
		// A whole number of milliseconds in a string (a quoted or
		// oddly-spaced bare number) is exact, not rounded through a float.
		{"700000000001\v", 700000000001 * time.Millisecond},
		{"700000000001 ms", 700000000001 * time.Millisecond},
		// Flink's unit names, with or without a space, any case.
		{"5 min", 5 * time.Minute},
		{"5min", 5 * time.Minute},
		{"5 MIN", 5 * time.Minute},
		{"2 minutes", 2 * time.Minute},
		{"1 minute", time.Minute},
		{"10 s", 10 * time.Second},
		{"10sec", 10 * time.Second},
		{"3 secs", 3 * time.Second},
		{"1 second", time.Second},
		{"250 millis", 250 * time.Millisecond},
		{"250 milliseconds", 250 * time.Millisecond},
		{"1 milli", time.Millisecond},
		{"7 us", 7 * time.Microsecond},
		{"7 µs", 7 * time.Microsecond},
		{"9 ns", 9 * time.Nanosecond},
		{"2 h", 2 * time.Hour},
		{"2 hours", 2 * time.Hour},
		{"1 hour", time.Hour},
		{"1d", 24 * time.Hour},
		{"3 days", 72 * time.Hour},
		{"1.5 s", 1500 * time.Millisecond},
		{".5s", 500 * time.Millisecond},
		// A bare number is milliseconds, as in Flink.
		{"100", 100 * time.Millisecond},
		{"1.5", 1500 * time.Microsecond},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.D())
		})
	}
}

func TestParseDurationErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty duration"},
		{"   ", "empty duration"},
		{"ten seconds", `"ten seconds" is not a duration`},
		{"s", `"s" is not a duration`},
		{"-", `"-" is not a duration`},
		{"--5s", `"--5s" is not a duration`},
		{"5-3s", `"5-3s" is not a duration`},
		{"1..2s", `"1..2s" is not a duration`},
		{"5 parsecs", `"5 parsecs" has unknown unit "parsecs"`},
		{"1e3s", `unknown unit "e3s"`},
		{"5 weeks", `unknown unit "weeks"`},
		{"106752 days", "out of range"},
		// 2^63 ns rounds to float64(MaxInt64) and must not wrap to a negative.
		{"9223372036854775808ns", "out of range"},
		{"106751.99116730064 days", "out of range"},
		{"-9999999999 h", "out of range"},
		// Negative and over MaxDuration (36500 days) are refused.
		{"-5s", "duration -5s is negative"},
		{"-5 min", "duration -5m0s is negative"},
		{"9223372036854775807ns", "duration 2562047h47m16.854775807s is out of range: at most 876000h0m0s (36500 days)"},
		{"36501d", "out of range"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseDuration(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// An interval join's bounds are offsets: negative ones parse, within the
// same range as any duration.
func TestParseSignedDuration(t *testing.T) {
	d, err := ParseSignedDuration("-40ms")
	require.NoError(t, err)
	assert.Equal(t, -40*time.Millisecond, d.D())
	d, err = ParseSignedDuration("5s")
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, d.D())
	_, err = ParseSignedDuration("-40000d")
	assert.ErrorContains(t, err, "out of range")
	_, err = ParseSignedDuration("40000d")
	assert.ErrorContains(t, err, "out of range")
	_, err = ParseDuration("-40ms")
	assert.ErrorContains(t, err, "negative", "a plain duration stays non-negative")
}

func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(Duration(90 * time.Second))
	require.NoError(t, err)
	assert.JSONEq(t, `"1m30s"`, string(b))
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{`"1m30s"`, 90 * time.Second},
		{`"5 min"`, 5 * time.Minute},
		{`1000000`, time.Millisecond}, // a JSON number is nanoseconds
	} {
		var d Duration
		require.NoError(t, json.Unmarshal([]byte(tc.in), &d), tc.in)
		assert.Equal(t, tc.want, d.D(), tc.in)
	}
	var d Duration
	assert.Error(t, json.Unmarshal([]byte(`"soon"`), &d))
	assert.Error(t, json.Unmarshal([]byte(`true`), &d))
}

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1048576", 1 << 20},
		{"100b", 100},
		{"100 bytes", 100},
		{"1 byte", 1},
		{"64kb", 64 << 10},
		{"64k", 64 << 10},
		{"64KiB", 64 << 10},
		{"64 kibibytes", 64 << 10},
		{"64 kilobytes", 64 << 10},
		{"128MiB", 128 << 20},
		{"128 mb", 128 << 20},
		{"128m", 128 << 20},
		{"2 megabytes", 2 << 20},
		{"1 GB", 1 << 30},
		{" 1 GB ", 1 << 30},
		{"1g", 1 << 30},
		{"3 gibibytes", 3 << 30},
		{"1 gigabytes", 1 << 30},
		{"2TiB", 2 << 40},
		{"2 t", 2 << 40},
		{"1.5KiB", 1536},
		{".5k", 512},
		{"0.4", 0},                              // fractions of a byte truncate
		{"8388607.99 TiB", 9223372025859659776}, // just below 2^63
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseByteSize(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, int64(got))
		})
	}
}

func TestParseByteSizeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `"" is not a size`},
		{"abc", `"abc" is not a size`},
		{"-1", `"-1" is not a size`},
		{"1..2k", `"1..2k" is not a size`},
		{"1 PB", `"1 PB" has unknown unit "pb"`},
		{"1e3", `unknown unit "e3"`},
		{"5 parsecs", `unknown unit "parsecs"`},
		// 2^63 must not wrap to a negative size.
		{"9223372036854775808", "out of range"},
		{"8388608 TiB", "out of range"},
		{"99999999 TB", "out of range"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseByteSize(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestByteSizeString(t *testing.T) {
	for _, tc := range []struct {
		in   ByteSize
		want string
	}{
		{0, "0"},
		{1000, "1000"},
		{1 << 10, "1KiB"},
		{1536, "1536"},
		{3 << 20, "3MiB"},
		{1<<20 + 1<<10, "1025KiB"},
		{5 << 30, "5GiB"},
		{2 << 40, "2048GiB"},
	} {
		assert.Equal(t, tc.want, tc.in.String())
		back, err := ParseByteSize(tc.want)
		require.NoError(t, err)
		assert.Equal(t, tc.in, back, "String parses back")
	}
}

// TestDecodeDurationAndByteSize: how spec values become durations and sizes.
func TestDecodeDurationAndByteSize(t *testing.T) {
	type opts struct {
		D *Duration `yaml:"d"`
		S ByteSize  `yaml:"s"`
	}
	for _, tc := range []struct {
		src   string
		wantD *time.Duration
		wantS int64
		err   string
	}{
		{src: "{d: 1500, s: 2048}", wantD: ptr(1500 * time.Millisecond), wantS: 2048},
		{src: "{d: 2 min, s: 4 KiB}", wantD: ptr(2 * time.Minute), wantS: 4096},
		{src: "{d: -5s}", err: "1:5: d: duration -5s is negative"},
		{src: "{d: -5}", err: "1:5: d: duration -5ms is negative"},
		{src: "{d: 5 parsecs}", err: `1:5: d: "5 parsecs" has unknown unit`},
		{src: "{d: true}", err: `1:5: d: expected a duration such as "500ms", "10s" or "5m", got true`},
		{src: "{d: [1s]}", err: "d: expected a duration"},
		{src: "{s: -1}", err: "1:5: s: size -1 is negative"},
		{src: "{s: 1.5}", err: `1:5: s: expected a size in bytes or with a unit such as "128MiB", got 1.5`},
		{src: "{s: lots}", err: `1:5: s: "lots" is not a size`},
	} {
		t.Run(tc.src, func(t *testing.T) {
			d := NewDecoder("")
			root := d.ParseYAML([]byte(tc.src))
			require.NoError(t, d.Errors.Err())
			var o opts
			d.Decode(root, "", &o)
			err := d.Errors.Err()
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Nil(t, o.D, "a value that did not decode stays unset")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, o.D)
			assert.Equal(t, *tc.wantD, o.D.D())
			assert.Equal(t, tc.wantS, int64(o.S))
		})
	}
}

func ptr[T any](v T) *T { return &v }
