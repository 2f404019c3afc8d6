package engine_test

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// lostOnce is a sink that fails NotifyCheckpointComplete of the first
// checkpoint >= from once with a RestoreBeforeError, as a sink whose
// transaction the broker aborted; it records what the next attempt
// restored.
type lostOnce struct {
	from     int64
	lostAt   atomic.Int64
	reopened atomic.Bool
	restored atomic.Int64 // the checkpoint the attempt after the loss restored (0: none)
}

func (l *lostOnce) definition() runtime.Definition {
	return runtime.Definition{Type: "test-lost-once", Kind: api.KindSink,
		Configure: func(*runtime.ConfigContext) *runtime.Plan {
			return &runtime.Plan{NewOperator: func() runtime.Operator { return &lostOnceSink{l: l} }, MinRetained: 2}
		}}
}

type lostOnceSink struct{ l *lostOnce }

func (s *lostOnceSink) Open(ctx *runtime.Context) error {
	if s.l.lostAt.Load() > 0 && ctx.Attempt() > 0 && !s.l.reopened.Load() {
		s.l.restored.Store(ctx.RestoredCheckpoint())
		s.l.reopened.Store(true)
	}
	return nil
}
func (s *lostOnceSink) Process(*runtime.Batch, runtime.Output) error { return nil }
func (s *lostOnceSink) Close() error                                 { return nil }
func (s *lostOnceSink) NotifyCheckpointAborted(int64)                {}
func (s *lostOnceSink) NotifyCheckpointComplete(id int64) error {
	if id >= s.l.from && s.l.lostAt.CompareAndSwap(0, id) {
		return &runtime.RestoreBeforeError{Checkpoint: id, Err: errors.New("transaction aborted")}
	}
	return nil
}

// runLostOnce runs a job into a lostOnce sink until the attempt after the
// loss has opened, and returns the job's final info and history.
func runLostOnce(t *testing.T, l *lostOnce) (api.JobInfo, []api.CheckpointInfo) {
	t.Helper()
	j := runtimetest.Start(t, `
name: lost
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 3, delay: 10ms}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: out, type: test-lost-once, from: [gen]}
`, runtimetest.Options{Types: append(slices.Clone(testTypes), l.definition()), CheckpointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, 10*time.Second, "a restore after the loss", l.reopened.Load)
	runtimetest.Cancel(t, 10*time.Second, j)
	return j.Info(), j.Checkpoints().History
}

// TestRestoreBeforeLostCheckpoint: a sink reporting the output of a
// completed checkpoint lost makes the job restore the checkpoint before it
// (kept: the sink's MinRetained raises retention to 2), and the history
// says so.
func TestRestoreBeforeLostCheckpoint(t *testing.T) {
	l := &lostOnce{from: 3}
	info, history := runLostOnce(t, l)
	lost := l.lostAt.Load()
	assert.Equal(t, 2, info.Checkpointing.Retained)
	assert.Positive(t, l.restored.Load(), "restored a checkpoint")
	assert.Less(t, l.restored.Load(), lost, "restored from a checkpoint before %d", lost)
	assert.Equal(t, 1, info.Restarts)
	requireNotedLost(t, history, lost)
}

// TestRestoreBeforeFirstCheckpointStartsOver: when the lost checkpoint is
// the job's first, the state before it is the start: the job starts over
// instead of refusing to restart.
func TestRestoreBeforeFirstCheckpointStartsOver(t *testing.T) {
	l := &lostOnce{from: 1}
	info, history := runLostOnce(t, l)
	assert.Equal(t, int64(1), l.lostAt.Load())
	assert.Zero(t, l.restored.Load(), "started over without state")
	assert.Equal(t, 1, info.Restarts)
	assert.NotEqual(t, api.StateFailed, info.State, info.Error)
	requireNotedLost(t, history, 1)
}

func requireNotedLost(t *testing.T, history []api.CheckpointInfo, lost int64) {
	t.Helper()
	for _, h := range history {
		if h.ID == lost && strings.Contains(h.FailureReason, "output lost before its commit") && h.Discarded {
			return
		}
	}
	t.Fatalf("checkpoint %d not marked lost in the history: %+v", lost, history)
}
