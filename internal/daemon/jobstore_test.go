package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOverCapacity(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	jobs := []endedJob{{"c", at(3)}, {"a", at(1)}, {"d", at(1)}, {"b", at(2)}}
	for _, tc := range []struct {
		capacity int
		drop     []string
	}{
		{4, nil},
		{10, nil},
		{3, []string{"a"}},
		{2, []string{"a", "d"}}, // equal end times: by id
		{1, []string{"a", "d", "b"}},
		{0, []string{"a", "d", "b", "c"}},
	} {
		require.Equal(t, tc.drop, overCapacity(jobs, tc.capacity), "capacity %d", tc.capacity)
	}
	require.Equal(t, "c", jobs[0].ID, "the input is not reordered")
}

func TestBucket(t *testing.T) {
	var b bucket
	now := time.Unix(100, 0)
	for i := range 4 {
		ok, _ := b.take(now, 2, 4)
		require.True(t, ok, "burst %d", i)
	}
	ok, wait := b.take(now, 2, 4)
	require.False(t, ok)
	require.Equal(t, 500*time.Millisecond, wait)
	ok, _ = b.take(now.Add(500*time.Millisecond), 2, 4)
	require.True(t, ok, "a token every 500 ms at 2 a second")
	ok, _ = b.take(now.Add(time.Hour), 2, 4)
	require.True(t, ok)
	require.Equal(t, 3.0, b.tokens, "never more than the burst")
}
