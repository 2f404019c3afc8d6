package runtime_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/runtimetest"
)

// lostOnce fails NotifyCheckpointComplete of the first checkpoint >= 3
// once with a RestoreBeforeError, as a sink whose transaction the broker
// aborted; it records what the next attempt restored.
var lostAt, restoredAfterLoss atomic.Int64

type lostOnceSink struct{ ctx *runtime.Context }

func init() {
	runtime.Register(runtime.Definition{Type: "test-lost-once", Kind: api.KindSink,
		Configure: func(*runtime.ConfigContext) *runtime.Plan {
			return &runtime.Plan{NewOperator: func() runtime.Operator { return &lostOnceSink{} }, MinRetained: 2}
		}})
}

func (s *lostOnceSink) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	if lostAt.Load() > 0 && ctx.Attempt > 0 {
		restoredAfterLoss.CompareAndSwap(0, ctx.RestoredCheckpoint)
	}
	return nil
}
func (s *lostOnceSink) Process(*runtime.Batch, *runtime.Output) error { return nil }
func (s *lostOnceSink) Close() error                                  { return nil }
func (s *lostOnceSink) NotifyCheckpointAborted(int64)                 {}
func (s *lostOnceSink) NotifyCheckpointComplete(id int64) error {
	if id >= 3 && lostAt.CompareAndSwap(0, id) {
		return &runtime.RestoreBeforeError{Checkpoint: id, Err: errors.New("transaction aborted")}
	}
	return nil
}

// TestRestoreBeforeLostCheckpoint: a sink reporting the output of a
// completed checkpoint lost makes the job restore the checkpoint before it
// (kept: the sink's MinRetained raises retention to 2), and the history
// says so.
func TestRestoreBeforeLostCheckpoint(t *testing.T) {
	j := runtimetest.Start(t, `
name: lost
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 3, delay: 10ms}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: out, type: test-lost-once, from: [gen]}
`, runtimetest.Options{CheckpointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, 10*time.Second, "a restore after the loss", func() bool { return restoredAfterLoss.Load() > 0 })
	runtimetest.Cancel(t, 10*time.Second, j)
	lost := lostAt.Load()
	assert.Equal(t, 2, j.Info().Checkpointing.Retained)
	assert.Less(t, restoredAfterLoss.Load(), lost, "restored from a checkpoint before %d", lost)
	assert.Equal(t, 1, j.Info().Restarts)
	var noted bool
	for _, h := range j.Checkpoints().History {
		if h.ID == lost {
			noted = strings.Contains(h.FailureReason, "output lost before its commit") && h.Discarded
		}
	}
	require.True(t, noted, "checkpoint %d marked in the history: %+v", lost, j.Checkpoints().History)
}
