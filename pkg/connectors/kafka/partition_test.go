package kafka

import (
	"testing"

	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJavaHashCode(t *testing.T) {
	// Values of Java's String.hashCode.
	for s, want := range map[string]int32{
		"": 0, "a": 97, "in": 3365, "flink-test": -240012065,
		"orders-v2-really-long-topic-name": -296466495,
		"😀x":                               54959989, // a surrogate pair
	} {
		assert.Equal(t, want, javaHashCode(s), "%q", s)
	}
}

// TestOwnerMatchesFlink: the subtask reading a partition is Flink's
// KafkaSourceEnumerator.getSplitOwner.
func TestOwnerMatchesFlink(t *testing.T) {
	for _, tc := range []struct {
		topic                        string
		partition, parallelism, want int
	}{
		{"in", 0, 1, 0}, {"in", 1, 2, 0}, {"in", 2, 3, 1}, {"in", 3, 4, 2}, {"in", 0, 4, 3}, {"in", 5, 7, 6},
		{"flink-test", 1, 2, 0}, {"flink-test", 2, 3, 2}, {"flink-test", 3, 4, 0}, {"flink-test", 0, 4, 1}, {"flink-test", 5, 7, 2},
		{"😀x", 5, 7, 5},
	} {
		assert.Equal(t, tc.want, owner(topicPartition{tc.topic, tc.partition}, tc.parallelism), "%+v", tc)
	}
	// Consecutive partitions of a topic go to consecutive subtasks.
	seen := map[int]int{}
	for p := range 12 {
		seen[owner(topicPartition{"flink-test", p}, 4)]++
	}
	assert.Equal(t, map[int]int{0: 3, 1: 3, 2: 3, 3: 3}, seen)
}

func TestPositionEncoding(t *testing.T) {
	for _, p := range []position{
		{tp: topicPartition{"in", 0}, next: 0, stop: noStop},
		{tp: topicPartition{"a.b_c-D", 1<<31 - 1}, next: 1 << 40, stop: 1<<40 + 7},
	} {
		got, err := decodePosition(p.encode())
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	good := position{tp: topicPartition{"in", 3}, next: 5, stop: noStop}.encode()
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte{}, good...), 0),
		"topic len": {positionVersion, 200, 'a'},
	} {
		_, err := decodePosition(b)
		assert.ErrorIs(t, err, state.ErrCorrupt, name)
	}
	_, err := decodePosition(append([]byte{9}, good[1:]...))
	assert.ErrorContains(t, err, "format version 9")
}

func TestResolveOutOfRange(t *testing.T) {
	tp := topicPartition{"in", 2}
	for _, tc := range []struct {
		name              string
		policy            startMode
		from, first, last int64
		to, skipped       int64
		err               string
	}{
		{"in range", startNone, 120, 100, 200, 120, 0, ""},
		{"at the end", startNone, 200, 100, 200, 200, 0, ""},
		{"deleted, fail", startNone, 50, 100, 200, 0, 0,
			"in/2: offset 50 is out of range (log start offset 100, end offset 200): records 50 to 99 were deleted (retention or delete-records) before they were read; set onOffsetOutOfRange: earliest to skip the 50 deleted records, or latest to skip to the end (150 records)"},
		{"beyond the end, fail", startNone, 300, 100, 200, 0, 0, "in/2: offset 300 is beyond the end of the partition (log start offset 100, end offset 200; was the topic recreated?); set onOffsetOutOfRange: earliest or latest to continue from there"},
		{"deleted, earliest", startEarliest, 50, 100, 200, 100, 50, ""},
		{"deleted, latest", startLatest, 50, 100, 200, 200, 150, ""},
		{"beyond the end, earliest", startEarliest, 300, 100, 200, 100, 0, ""},
		{"beyond the end, latest", startLatest, 300, 100, 200, 200, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to, skipped, err := resolveOutOfRange(tc.policy, tp, tc.from, tc.first, tc.last)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, [2]int64{tc.to, tc.skipped}, [2]int64{to, skipped})
		})
	}
}
