package file

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// crashObjects runs the crash job with its output and checkpoints in
// object storage, the store kept in files of the crashed MemFS
// (vfs.FileStoreWith) so that a crash can fall between any two of its
// steps. Parts of 1 KiB (with rolling at 2 KiB) make every part file a
// real multipart upload of one or two parts plus a tail.
var crashObjects = crashLayout{out: "s3://bucket/out", chk: "s3://bucket/chk",
	wrap: func(f vfs.FS) vfs.FS {
		return vfs.Mux(f, vfs.NewObjectFS(vfs.FileStoreWith(f, "/s3", 1<<10), vfs.ObjectOptions{PartSize: 1 << 10}))
	},
	sinkPrefixes: []string{"/s3/bucket/out", "/s3/.uploads", "/s3/.tmp"}}

// TestObjectCrashSweep is TestCrashSweep in object storage: a crash at
// every sink step (creating, uploading, completing uploads, the state
// objects and _metadata in between) as a process crash and a power loss,
// then recovery from the latest complete checkpoint: every record exactly
// once in the finished objects.
func TestObjectCrashSweep(t *testing.T) {
	c := &sinkCrash{mem: vfs.NewMem(), k: 1 << 30, prefixes: crashObjects.sinkPrefixes}
	j, err := runCrashJob(crashObjects, c.FS(), "", "", 10000)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, j.State(), j.Info().Error)
	n := c.seenOps()
	require.Greater(t, n, 20)
	stride := 2
	if testing.Short() {
		stride = 6
	}
	var points []int
	for k := 1; k <= n+5; k += stride {
		points = append(points, k)
	}
	total := 0
	kinds := map[string]bool{}
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		crashed, restored, unrecoverable := tally(t, sweep(crashObjects, atSinkOp, points, nil, model), kinds)
		t.Logf("%s: %d crash points (reference run: %d store operations), %d recovered from a checkpoint", model, crashed, n, restored)
		require.Zero(t, unrecoverable, "committed output without a complete checkpoint")
		total += crashed
	}
	t.Logf("object storage crash points: %d; operation kinds: %v", total, slices.Sorted(maps.Keys(kinds)))
}

// TestObjectCrashSweepDuringRecovery crashes the recovery (re-commit,
// continuing uploads, taking back, aborting orphans) and recovers again.
func TestObjectCrashSweepDuringRecovery(t *testing.T) {
	firsts := []int{60, 90}
	var seconds []int
	for k := 1; k <= 30; k += 2 {
		seconds = append(seconds, k)
	}
	if testing.Short() {
		firsts = firsts[:1]
	}
	total := 0
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		crashed, _, unrecoverable := tally(t, sweep(crashObjects, atSinkOp, firsts, seconds, model), map[string]bool{})
		require.Zero(t, unrecoverable)
		total += crashed
	}
	t.Logf("object storage recovery crash points: %d", total)
}
