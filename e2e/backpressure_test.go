package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// A file sink slowed down to 20 ms a batch (a fault rule) backpressures
// what feeds it: `info -o json` shows the source and the filter waiting
// for room most of the time and the sink busy, and a source with nothing
// to read idle, as Flink's busyTimeMsPerSecond,
// backPressuredTimeMsPerSecond and idleTimeMsPerSecond would. `info` shows
// them as columns.
func TestBackpressureInInfo(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"FLINKGO_FAULTS=file.write:delay,every=1,times=100000000,delay=20ms"}
	e.startDaemon()
	defer e.stopDaemon()
	id := e.mustRun("run", e.writeSpec("slow.yaml", fmt.Sprintf(`
name: slow-sink
checkpointing: {interval: 10s}
operators:
  - {uid: gen, type: datagen}
  - {uid: all, type: filter, from: [gen], expr: "true"}
  - {uid: files, type: file, from: [all], path: %s}
  - {uid: trickle, type: datagen, rate: 1}
  - {uid: quiet, type: discard, from: [trickle]}
`, filepath.Join(e.home, "out"))))

	// Three readings a second apart, once the figures are there; the
	// median of each.
	var readings []api.JobInfo
	require.Eventually(t, func() bool {
		info := e.info(id)
		if info.Operators[2].BusyTimeMsPerSecond == 0 {
			return false
		}
		readings = append(readings, info)
		time.Sleep(time.Second)
		return len(readings) == 3
	}, 60*time.Second, 100*time.Millisecond)
	median := func(uid string, f func(api.OperatorInfo) int64) int64 {
		var v []int64
		for _, info := range readings {
			for _, op := range info.Operators {
				if op.UID == uid {
					v = append(v, f(op))
				}
			}
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return v[1]
	}
	busy := func(op api.OperatorInfo) int64 { return op.BusyTimeMsPerSecond }
	bp := func(op api.OperatorInfo) int64 { return op.BackPressuredTimeMsPerSecond }
	idle := func(op api.OperatorInfo) int64 { return op.IdleTimeMsPerSecond }
	show := fmt.Sprintf("%+v", readings[len(readings)-1].Operators)
	require.GreaterOrEqual(t, median("gen", bp), int64(800), "the source waits for room: %s", show)
	require.GreaterOrEqual(t, median("all", bp), int64(800), "so does the filter: %s", show)
	require.GreaterOrEqual(t, median("files", busy), int64(800), "the slow sink is busy: %s", show)
	require.Less(t, median("files", bp), int64(50), "a sink has nothing to wait for downstream: %s", show)
	require.GreaterOrEqual(t, median("trickle", idle), int64(800), "a source with nothing to read is idle: %s", show)
	require.GreaterOrEqual(t, median("quiet", idle), int64(800), "and so is what reads it: %s", show)

	last := readings[len(readings)-1]
	sub := last.Operators[0].Subtasks
	require.Len(t, sub, 1)
	require.Positive(t, sub[0].AccumulatedBackPressuredTimeMs)
	require.Positive(t, sub[0].RecordsOut)

	text := e.mustRun("info", id)
	require.Contains(t, text, "BUSY")
	require.Contains(t, text, "BACKPRESSURED")
	row := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "files ") {
			row = l
		}
	}
	require.Regexp(t, `\b(8[0-9]|9[0-9]|100)%`, row, "the sink's busy share: %s", text)
}
