package file

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// A bounded job that fails right after its final checkpoint committed must
// not replay its input into the output again: the final checkpoint is
// persisted like a periodic one (FLIP-147) and the restart restores it.
func TestFailureAfterFinalCommitDoesNotDuplicate(t *testing.T) {
	dir := t.TempDir()
	hook := &faultHook{rules: []*faultRule{{point: "file.commit-done", every: 1, times: 1}}}
	j := runtimetest.Start(t, fmt.Sprintf(`
name: bounded
restartStrategy: {type: fixed-delay, attempts: 3, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: 1000}
  - {uid: out, type: file, from: [gen], path: %s, bucket: none}
`, dir), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: hook})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	require.Equal(t, 1, hook.fired()["file.commit-done"])
	require.Equal(t, 1, j.Info().Restarts)
	requireExactlyOnce(t, dir, nil, 1000)
}
