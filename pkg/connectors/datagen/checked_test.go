package datagen

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, c := range []struct {
		split int
		seq   int64
	}{{0, 0}, {3, 1042}, {7, -5}, {1 << 20, 1<<63 - 1}} {
		line := AppendChecked(nil, c.split, c.seq)
		require.LessOrEqual(t, len(line), maxCheckedLen)
		split, seq, err := ParseChecked(append(line, '\n'))
		require.NoError(t, err, string(line))
		require.Equal(t, c.split, split)
		require.Equal(t, c.seq, seq)
	}
	require.Regexp(t, `^\{"split":3,"seq":1042,"crc":"[0-9a-f]{8}"\}$`, string(AppendChecked(nil, 3, 1042)))
}

func TestParseRejects(t *testing.T) {
	good := string(AppendChecked(nil, 3, 1042))
	for _, bad := range []string{
		"", "{}", `{"idx": 3}`, good[:len(good)-1], good + " ", " " + good,
		`{"split":3,"seq":1042}`, `{"split":x,"seq":1042,"crc":"00000000"}`,
		`{"split":03,"seq":1042,"crc":"00000000"}`, `{"split":3,"seq":+1042,"crc":"00000000"}`,
		`{"split":3,"seq":1042,"crc":"0000000"}`, `{"split":3,"seq":1042,"crc":"0000000G"}`,
	} {
		_, _, err := ParseChecked([]byte(bad))
		require.ErrorIs(t, err, errNotChecked, bad)
	}
	// A flipped digit keeps the syntax but breaks the checksum.
	flipped := []byte(good)
	flipped[len(`{"split":3,"seq":10`)] = '5'
	_, _, err := ParseChecked(flipped)
	require.True(t, errors.Is(err, errChecksum), "%v", err)
}
