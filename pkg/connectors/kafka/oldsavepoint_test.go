package kafka_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// testdata/oldsavepoint is a stop-with-savepoint of a Kafka source written
// by flinkgo 259c5dd (before the public API split): topic "old" of two
// partitions, next offsets 1500 and 1500. This version restores it and reads
// on from exactly those offsets.
func TestRestoresKafkaSavepointOfOlderVersion(t *testing.T) {
	b := startBroker(t, "old:2")
	produceIdx(t, b.Addr(), "old", 1, 4000)
	var want []int64
	for idx, at := range locate(t, b.Addr(), "old") {
		if at.offset >= 1500 {
			want = append(want, idx)
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	require.Len(t, want, 1000)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: old-savepoint-kafka
operators:
  - {uid: source, type: kafka, brokers: [%s], topic: old, groupId: old, startingOffsets: earliest, format: json, bounded: latest}
  - {uid: out, type: test-collect, from: [source], name: %s}
`, b.Addr(), name), runtimetest.Options{Types: testTypes, Restore: "testdata/oldsavepoint", CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	got := idxs(t, runtimetest.Values(name))
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	require.Equal(t, want, got)
}
