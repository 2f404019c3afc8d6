package chaos

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// finalFault fails the publication of a bounded job's final checkpoint,
// once.
type finalFault struct {
	job   atomic.Pointer[engine.Job]
	mu    sync.Mutex
	fired int64 // the failed checkpoint's id
}

func (f *finalFault) Fire(point string, attrs ...any) error {
	j := f.job.Load()
	if point != "checkpoint.publish-metadata" || j == nil {
		return nil
	}
	id := attrs[0].(int64)
	for _, h := range j.Checkpoints().History {
		if h.ID == id && h.Kind == checkpoint.Final.String() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.fired == 0 {
				f.fired = id
				return errors.New("injected: final checkpoint metadata write failed")
			}
		}
	}
	return nil
}

// TestFailedFinalCheckpointIsRetried: when the final checkpoint of a
// bounded job fails without a task failing (its metadata or a state file
// cannot be written), the job must not hang waiting for it: the failure
// counts (tolerableFailures 0 fails the job over, and the restarted job
// takes its final checkpoint again) and the job FINISHES.
func TestFailedFinalCheckpointIsRetried(t *testing.T) {
	f := &finalFault{}
	j, err := job{spec: diskSpec(), fs: vfs.NewMem(), faults: f}.start()
	require.NoError(t, err)
	f.job.Store(j)
	timedOut := awaitEnd(j, 5*time.Second)
	f.mu.Lock()
	fired := f.fired
	f.mu.Unlock()
	require.NotZero(t, fired, "the final checkpoint was never published")
	c := j.Checkpoints()
	require.False(t, timedOut, "the final checkpoint %d failed; 5s later the job was still %s (%d checkpoints completed, %d failed)",
		fired, api.StateRunning, c.Counts.Completed, c.Counts.Failed)
	require.Equal(t, api.StateFinished, j.State(), fmt.Sprint(j.Info().Error))
}
