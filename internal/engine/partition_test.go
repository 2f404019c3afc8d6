package engine_test

import (
	"fmt"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestHashPartitioningSendsEachKeyToOneSubtask(t *testing.T) {
	name := fmt.Sprintf("keys-%d", time.Now().UnixNano())
	j := runtimetest.Start(t, fmt.Sprintf(`
name: keys
parallelism: 3
operators:
  - {uid: gen, type: datagen, count: 30000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx %% 101"}
  - {uid: sink, type: test-keys, from: [key], name: %s, parallelism: 4}
`, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second))
	seen := runtimetest.KeySubtasks(name)
	require.Len(t, seen, 101)
	used := map[int]bool{}
	for k, subtasks := range seen {
		require.Len(t, subtasks, 1, "key %s went to subtasks %v", k, subtasks)
		for s := range subtasks {
			used[s] = true
		}
	}
	require.Len(t, used, 4, "keys spread over every subtask")
}

// A slow sink holds the whole pipeline back (bounded channels), so an
// unbounded fast source does not pile records up in memory.
func TestBackpressureBoundsMemory(t *testing.T) {
	name := fmt.Sprintf("slow-%d", time.Now().UnixNano())
	j := runtimetest.Start(t, fmt.Sprintf(`
name: slow
operators:
  - {uid: gen, type: datagen, format: raw}
  - {uid: pass, type: test-pass, from: [gen]}
  - {uid: sink, type: test-collect, from: [pass], name: %s, delay: 20ms}
`, name), runtimetest.Options{Types: testTypes})
	defer func() { require.NoError(t, j.Cancel()) }()
	time.Sleep(300 * time.Millisecond)
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	out1 := j.Info().Operators[0].RecordsOut
	time.Sleep(time.Second)
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	info := j.Info()
	generated := info.Operators[0].RecordsOut - out1
	consumed := info.Operators[2].RecordsIn
	// The source made only as many records as the sink took plus what the
	// bounded channels hold (2 hops x 8 batches x 512 records, plus the
	// batches in the hands of each subtask).
	require.Less(t, info.Operators[0].RecordsOut-consumed, int64(3*8*512+4*512), "records in flight")
	require.Less(t, generated, int64(200_000), "the source was held back")
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	require.Less(t, grew, int64(16<<20), "heap grew by %d bytes in a second", grew)
}
