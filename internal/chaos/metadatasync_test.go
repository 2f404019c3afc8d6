package chaos

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// metadataSyncFault fails (EIO) the directory sync that follows the
// rename of checkpoint N's _metadata, and every later removal under that
// checkpoint's directory (the disk keeps failing there); after the
// restart it crashes the process at the sinks' first writes.
type metadataSyncFault struct {
	mem *vfs.MemFS
	n   int64

	mu       sync.Mutex
	failedAt string
	restores int
	writes   int
	clone    *vfs.MemFS
	crashed  chan struct{}
}

// inCheckpoint reports whether p is checkpoint N's directory or in it.
func (f *metadataSyncFault) inCheckpoint(p string) bool {
	dir := fmt.Sprintf("/chk-%d", f.n)
	return strings.HasSuffix(p, dir) || strings.Contains(p, dir+"/")
}

func (f *metadataSyncFault) MaybeError(op vfs.Op) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clone != nil {
		return vfs.ErrCrashed
	}
	switch {
	case f.failedAt == "" && op.Kind == vfs.OpSyncDir && strings.HasSuffix(op.Path, fmt.Sprintf("/chk-%d", f.n)):
		if _, err := f.mem.Stat(op.Path + "/_metadata"); err == nil {
			f.failedAt = op.Path
			return syscall.EIO
		}
	case f.failedAt != "" && (op.Kind == vfs.OpRemoveAll || op.Kind == vfs.OpRemove) && f.inCheckpoint(op.Path):
		return syscall.EIO
	}
	return nil
}

func (f *metadataSyncFault) Fire(point string, _ ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clone != nil {
		return vfs.ErrCrashed
	}
	if f.failedAt == "" {
		return nil
	}
	switch point {
	case "file.restore":
		f.restores++
	case "file.write":
		if f.restores < 2 {
			return nil
		}
		if f.writes++; f.writes == 3 {
			f.clone = f.mem.CrashClone(vfs.ProcessCrash)
			close(f.crashed)
			return vfs.ErrCrashed
		}
	}
	return nil
}

// TestFailedMetadataSyncIsNeverRecovered: when the directory sync after
// the rename of a checkpoint's _metadata fails, the job declares the
// checkpoint failed and fails over to the one before; if removing the
// failed checkpoint fails too, it stays complete-looking on disk. After the
// failover the file sink removes the pending part files only the failed
// checkpoint refers to, so recovering from it after a crash would fail.
// Recovery (as the daemon's after kill -9) trusts only checkpoints up to
// the newest the job recorded as completed, so it never picks it.
func TestFailedMetadataSyncIsNeverRecovered(t *testing.T) {
	crashes := 0
	for attempt := 0; attempt < 5; attempt++ {
		f := &metadataSyncFault{mem: vfs.NewMem(), n: 3, crashed: make(chan struct{})}
		j, err := job{spec: diskSpec(), fs: vfs.WithFaults(f.mem, f), faults: f}.start()
		require.NoError(t, err)
		select {
		case <-f.crashed:
		case <-j.Done():
		case <-time.After(60 * time.Second):
		}
		_ = j.Cancel()
		<-j.Done()
		if f.clone == nil {
			t.Logf("run %d: no crash (failed at %q)", attempt, f.failedAt)
			continue
		}
		crashes++
		dir, id, err := latestComplete(f.clone, j)
		require.NoError(t, err)
		require.NotEqual(t, f.n, id, "recovery picked checkpoint %d, which the job had declared failed", f.n)
		_, err = recoverRun(fileJob, f.clone, j.ID(), dir)
		require.NoError(t, err, "run %d: recovery from %s", attempt, dir)
	}
	require.Positive(t, crashes, "the scenario never materialised")
}
