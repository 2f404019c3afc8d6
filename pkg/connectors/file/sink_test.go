package file

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// openSink configures a file sink from options and opens subtask 0 of 1
// on fsys, without a job: the operator contract driven by hand.
func openSink(t *testing.T, fsys vfs.FS, opts string, st *state.OperatorState) (*sink, *runtime.Context) {
	t.Helper()
	g, err := engine.Compile(testRegistry, "job.yaml", []byte(fmt.Sprintf(`name: s
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: file, from: [gen], %s}
`, opts)), engine.Defaults{})
	require.NoError(t, err)
	s := g.Vertices[1].Plan.NewOperator().(*sink)
	if st == nil {
		st = state.NewOperatorState()
	}
	ctx := runtime.NewContext(runtime.ContextOptions{JobID: "job", UID: "out", Parallelism: 1, State: st, Log: zerolog.Nop(),
		FS: fsys, Metrics: &runtime.Metrics{}})
	require.NoError(t, s.Open(ctx))
	return s, ctx
}

func TestSinkEventTimeBuckets(t *testing.T) {
	mem := vfs.NewMem()
	s, ctx := openSink(t, mem, `path: /out, bucket: "yyyy-MM-dd--HH", bucketTime: event, timezone: UTC`, nil)
	at := func(h int) int64 { return time.Date(2024, 2, 29, h, 30, 0, 0, time.UTC).UnixMilli() }
	b := &runtime.Batch{Records: []runtime.Record{
		{Value: []byte("a"), Timestamp: at(10)}, {Value: []byte("b"), Timestamp: at(11)},
		{Value: []byte("c"), Timestamp: at(10)}, {Value: []byte("d"), Timestamp: at(23)},
	}}
	require.NoError(t, s.Process(b, nil))
	require.NoError(t, s.Finish(nil))
	require.NoError(t, s.SnapshotState(1))
	require.Equal(t, map[string]any{"pendingFiles": int64(3), "inProgressFiles": int64(0), "nextPart": int64(3)}, s.DescribeState())
	require.NoError(t, s.NotifyCheckpointComplete(1))
	figures, _ := ctx.Metrics().Snapshot()
	require.Equal(t, int64(3), figures["committedFiles"])
	for path, want := range map[string]string{
		"/out/2024-02-29--10/part-0-0": "a\nc\n",
		"/out/2024-02-29--11/part-0-1": "b\n",
		"/out/2024-02-29--23/part-0-2": "d\n",
	} {
		data, err := vfs.ReadFile(mem, path)
		require.NoError(t, err, path)
		require.Equal(t, want, string(data), path)
	}
	require.NoError(t, s.Close())
}

// The sink's state goes through the runtime's state file format and
// comes back: a restored sink commits what the snapshot left pending.
func TestSinkRestoresThroughStateFile(t *testing.T) {
	mem := vfs.NewMem()
	opts := `path: /out, bucket: none, rolling: {onCheckpoint: true}`
	s, ctx := openSink(t, mem, opts, nil)
	require.NoError(t, s.Process(&runtime.Batch{Records: []runtime.Record{{Value: []byte("x")}}}, nil))
	require.NoError(t, s.SnapshotState(7))
	require.NoError(t, s.Close())

	data, _ := state.Encode(ctx.OperatorState(), nil)
	snap, err := state.Decode(data)
	require.NoError(t, err)
	s2, _ := openSink(t, mem, opts, state.RestoreOperatorState([]*state.Snapshot{snap}, 0, 1))
	got, err := vfs.ReadFile(mem, "/out/part-0-0")
	require.NoError(t, err)
	require.Equal(t, "x\n", string(got))
	require.NoError(t, s2.Close())
}

func TestWriteDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	w := newWriter(vfs.Default, config{Dir: t.TempDir(), Parallelism: 1, BufferSize: 4 << 10}, zerolog.Nop(), nil)
	require.NoError(t, w.Start())
	r := &runtime.Record{Value: []byte(`{"idx": 123456}`)}
	now := time.Now()
	require.NoError(t, w.Write("b", r, now)) // opens the part
	allocs := testing.AllocsPerRun(10000, func() {
		if err := w.Write("b", r, now); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
	require.NoError(t, w.Close())
}

// An output path that cannot be written (here: under a regular file) is a
// configuration error: the job fails at once, its restart strategy unused.
func TestUnwritablePathFailsWithoutRestarts(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o600))
	j := runtimetest.Start(t, fmt.Sprintf(`
name: unwritable
checkpointing: {interval: 1s}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: file, from: [gen], path: %q}
`, filepath.Join(blocker, "out")), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, 10*time.Second))
	info := j.Info()
	require.Zero(t, info.Restarts)
	require.Contains(t, info.Error, "not a directory")
}
