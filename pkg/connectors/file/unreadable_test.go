package file

import (
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// When a job fails and none of its completed checkpoints can be read for a
// while (an I/O error), it must not start over from the beginning — that
// would commit its input a second time — but retry until it can restore.
func TestUnreadableCheckpointsDoNotRestartFromScratch(t *testing.T) {
	mem := vfs.NewMem()
	var unreadable atomic.Bool
	fsys := vfs.WithFaults(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if unreadable.Load() && op.Kind == vfs.OpOpen && strings.Contains(op.Path, "/chk-") {
			return syscall.EIO
		}
		return nil
	}))
	name := fmt.Sprintf("unreadable-%d", time.Now().UnixNano())
	hook := &faultHook{rules: []*faultRule{{point: "file.commit-done", every: 3, times: 1}}}
	// The failure comes after a few commits; from then on checkpoints cannot
	// be read for half a second.
	hook.onFire = func() {
		unreadable.Store(true)
		time.AfterFunc(500*time.Millisecond, func() { unreadable.Store(false) })
	}
	j := runtimetest.Start(t, fmt.Sprintf(`
name: %s
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 20ms}
operators:
  - {uid: gen, type: datagen, count: 20000, rate: 20000}
  - {uid: out, type: file, from: [gen], path: /out, bucket: none, rolling: {onCheckpoint: true}}
`, name), runtimetest.Options{Types: testTypes, FS: fsys, CheckpointsDir: "/chk", Faults: hook})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 60*time.Second), j.Info().Error)
	require.Equal(t, 1, hook.fired()["file.commit-done"])
	require.GreaterOrEqual(t, j.Info().Restarts, 2, "the unreadable checkpoints cost failed restarts")
	requireExactlyOnce(t, "out", eocheck.FS(mem, "/"), 20000)
}
