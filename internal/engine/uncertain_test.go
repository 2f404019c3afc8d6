package engine_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// A record write that fails may still have been applied (an etcd
// transaction that timed out while the quorum was lost): the durable record
// then names a checkpoint the job aborted. The job loop's restart decides
// from its in-memory record, which is older; it must not delete that
// checkpoint, or a daemon resuming from the durable record finds its restore
// point gone and refuses to resume the job.
func TestRestartKeepsACheckpointWhoseRecordMayHaveBeenApplied(t *testing.T) {
	const spec = `name: uncertain
parallelism: 1
checkpointing: {interval: 30ms}
restartStrategy: {type: fixed-delay, attempts: 5, delay: 50ms}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: out, type: file, from: [gen], path: /out, bucket: none}
`
	g, err := engine.Compile(all.Registry(), "uncertain.yaml", []byte(spec), engine.Defaults{})
	require.NoError(t, err)
	fsys := vfs.NewMem()
	var mu sync.Mutex
	calls, frozen := 0, false
	var durable engine.Recovery // what the coordination store holds
	onRecord := func(_ *engine.Job, rec engine.Recovery) error {
		mu.Lock()
		defer mu.Unlock()
		if frozen {
			return errors.New("etcd unavailable")
		}
		calls++
		durable = rec // applied, whatever the answer
		if calls == 3 {
			return errors.New("etcdserver: request timed out")
		}
		return nil
	}
	j := engine.StartJob(engine.JobOptions{ID: "job1", Graph: g, Env: &engine.Env{FS: fsys}, CheckpointsDir: "/chk", OnRecord: onRecord})
	defer func() {
		_ = j.Cancel()
		<-j.Done()
	}()
	require.Eventually(t, func() bool { return j.Info().Restarts > 0 }, 10*time.Second, 2*time.Millisecond, "the failed record fails the job over")
	mu.Lock()
	frozen = true // the store is away again: no record after the restart
	rec := durable
	mu.Unlock()
	time.Sleep(100 * time.Millisecond) // let the restart's decision and its deletions run
	require.NotNil(t, rec.RestorePoint)
	f, err := engine.RestoreFactsOf(fsys, "/chk", "job1", rec)
	require.NoError(t, err)
	_, d := engine.ChooseRestore(fsys, f, zerolog.Nop())
	require.Equal(t, checkpoint.RestoreLoad, d.Action, "a daemon resuming from the durable record (checkpoint %d): %s", rec.RestorePoint.ID, d.Reason)
	require.Equal(t, rec.RestorePoint.ID, d.Point.ID)
}
