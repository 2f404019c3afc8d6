package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Stateless subtasks write no state file: the snapshot holds files for
// the source and the keyed counter only, and _metadata lists the keyBy
// and the sink subtasks without a file. A restore from it, and from the
// same snapshot written the old way (an empty state file for each of
// them), continues the counts exactly.
func TestStatelessSubtasksWriteNoStateFile(t *testing.T) {
	const total = 40000
	name := fmt.Sprintf("stateless-%d", time.Now().UnixNano())
	j := runtimetest.Start(t, countingSpec(name, 2, total), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), SavepointsDir: t.TempDir()})
	waitRead(t, j, total/10)
	path, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))

	entries, err := os.ReadDir(path)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	require.Equal(t, []string{"_metadata", "cnt-0.state", "cnt-1.state", "gen-0.state", "gen-1.state"}, files)
	_, m, err := checkpoint.Load(vfs.Default, path)
	require.NoError(t, err)
	for _, uid := range []string{"key", "out"} {
		op := m.Operator(uid)
		require.NotNil(t, op, uid)
		require.Len(t, op.Subtasks, op.Parallelism, "%s: every subtask is listed", uid)
		for _, h := range op.Subtasks {
			require.Empty(t, h.File, "%s subtask %d", uid, h.Subtask)
		}
	}

	old := oldStyleCopy(t, path, m, "key", "out")
	for i, from := range []string{path, old} {
		run := fmt.Sprintf("%s-restore%d", name, i)
		r := runtimetest.Start(t, countingSpec(run, 1, total), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: from})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, r, 30*time.Second), r.Info().Error)
		before := runtimetest.MaxCounts(t, runtimetest.Values(name))
		after := runtimetest.MaxCounts(t, runtimetest.Values(run))
		sum := 0
		for k, n := range after {
			require.GreaterOrEqual(t, n, before[k], "key %s restarted from zero", k)
			sum += n
		}
		require.Equal(t, total, sum, "restored from %s", from)
	}
}

// oldStyleCopy copies the snapshot at dir and gives each subtask of uids
// an empty state file, as flinkgo wrote before stateless subtasks skipped
// it.
func oldStyleCopy(t *testing.T, dir string, m *checkpoint.Metadata, uids ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "old")
	require.NoError(t, os.Mkdir(out, 0o700))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == checkpoint.MetadataFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(out, e.Name()), data, 0o600))
	}
	sort.Strings(uids)
	for i := range m.Operators {
		op := &m.Operators[i]
		if sort.SearchStrings(uids, op.UID) == len(uids) || uids[sort.SearchStrings(uids, op.UID)] != op.UID {
			continue
		}
		for k := range op.Subtasks {
			h := &op.Subtasks[k]
			data, _ := state.EncodeChunks(state.NewOperatorState(), nil)
			h.File = checkpoint.StateFileName(op.UID, h.Subtask)
			require.NoError(t, checkpoint.WriteState(vfs.Default, out, h.File, data))
			h.Size, h.Checksum = data.Size, data.Checksum
		}
	}
	require.NoError(t, checkpoint.PublishMetadata(vfs.Default, out, m))
	return out
}
