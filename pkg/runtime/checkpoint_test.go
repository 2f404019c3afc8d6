package runtime_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime/runtimetest"
)

func TestKeyedCountExactAfterFailures(t *testing.T) {
	for _, at := range []string{"process", "snapshot", "notify"} {
		t.Run(at, func(t *testing.T) {
			name := fmt.Sprintf("exact-%s-%d", at, time.Now().UnixNano())
			runtimetest.Reset(name)
			j := runtimetest.Start(t, fmt.Sprintf(`
name: exact
parallelism: 2
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 5, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: 20000, rate: 40000}
  - {uid: fail, type: test-fail, from: [gen], name: %s, every: 3000, times: 3, at: %s}
  - {uid: key, type: keyBy, from: [fail], expr: "idx %% 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: %s, parallelism: 1}
`, name, at, name), runtimetest.Options{CheckpointsDir: t.TempDir()})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			require.Equal(t, int64(3), runtimetest.Fired(name))
			// Two subtasks may fail in the same attempt: one restart.
			require.GreaterOrEqual(t, j.Info().Restarts, 2)
			final := runtimetest.MaxCounts(t, runtimetest.Values(name))
			total := 0
			for _, n := range final {
				total += n
			}
			require.Equal(t, 20000, total, "counts %v", final)
		})
	}
}
