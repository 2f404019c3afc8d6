package api

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written in specs and config as "500ms", "10s",
// "5 min" or "1h30m" (Go syntax, or a number and one of Flink's unit names).
// A bare number is milliseconds, as in Flink.
type Duration time.Duration

// D is the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration in the form a user would write it.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("duration: %w", err)
		}
		*d = Duration(n)
		return nil
	}
	v, err := ParseDuration(s)
	*d = v
	return err
}

var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// MaxDuration bounds every duration option (36500 days): a longer one is
// a mistake, and the sum of two still fits a time.Duration (deadlines add
// a timeout to a time, backoffs a delay to a threshold).
const MaxDuration = Duration(36500 * 24 * time.Hour)

// ParseDuration parses the duration forms described on Duration, from
// zero to MaxDuration (a negative or longer one is an error).
func ParseDuration(s string) (Duration, error) {
	d, err := parseDuration(s)
	if err != nil {
		return 0, err
	}
	return d, checkDuration(d)
}

// ParseSignedDuration is ParseDuration for an offset that may be negative
// (an interval join's lower bound): from -MaxDuration to MaxDuration.
func ParseSignedDuration(s string) (Duration, error) {
	d, err := parseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < -MaxDuration {
		return 0, fmt.Errorf("duration %s is out of range: at least -%s (36500 days)", d, MaxDuration)
	}
	return d, checkDuration(max(d, 0))
}

// durationOfMillis is a bare number of milliseconds (Flink's form) as a
// Duration, range-checked like ParseDuration without overflowing.
func durationOfMillis(ms int64) (Duration, error) {
	if ms < 0 {
		return 0, fmt.Errorf("duration %dms is negative", ms)
	}
	if limit := int64(MaxDuration / Duration(time.Millisecond)); ms > limit {
		return 0, fmt.Errorf("%d ms is out of range: at most %d (36500 days)", ms, limit)
	}
	return Duration(ms) * Duration(time.Millisecond), nil
}

// checkDuration refuses a negative duration or one over MaxDuration.
func checkDuration(d Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("duration %s is negative", d)
	case d > MaxDuration:
		return fmt.Errorf("duration %s is out of range: at most %s (36500 days)", d, MaxDuration)
	}
	return nil
}

func parseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf(`empty duration; write e.g. "10s"`)
	}
	if d, err := time.ParseDuration(t); err == nil {
		return Duration(d), nil
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '-') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf(`%q is not a duration; write e.g. "500ms", "10s", "5m" or "1h"`, s)
	}
	if unit == "" {
		unit = "ms"
	}
	mult, ok := durationUnits[unit]
	if !ok {
		return 0, fmt.Errorf(`%q has unknown unit %q; use ms, s, m(in), h or d`, s, unit)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		// A whole number is exact: through a float64, 700000000001ms
		// would come out 64ns short.
		if n > math.MaxInt64/int64(mult) || n < math.MinInt64/int64(mult) {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return Duration(n * int64(mult)), nil
	}
	v := f * float64(mult)
	// float64(math.MaxInt64) rounds up to 2^63, which does not fit: >=.
	if v >= math.MaxInt64 || v < math.MinInt64 {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return Duration(v), nil
}

// ByteSize is a size in bytes, written as a number or with a unit: "64kb",
// "128MiB", "1 GB" (k, m, g units are binary, as in Flink's MemorySize).
type ByteSize int64

var sizeUnits = map[string]int64{
	"": 1, "b": 1, "byte": 1, "bytes": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "kibibytes": 1 << 10, "kilobytes": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "mebibytes": 1 << 20, "megabytes": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "gibibytes": 1 << 30, "gigabytes": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseByteSize parses the forms described on ByteSize.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf(`%q is not a size; write e.g. "1048576", "64KiB" or "128MiB"`, s)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf(`%q has unknown unit %q; use B, KiB, MiB, GiB or TiB`, s, unit)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 { // 2^63 and above do not fit (see ParseDuration)
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return ByteSize(v), nil
}

func (b ByteSize) String() string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", b>>10)
	}
	return strconv.FormatInt(int64(b), 10)
}
