package checkpoint

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// A savepoint directory without _metadata is described as incomplete and
// can be removed; anything that is not such a leftover (another name, a
// _metadata, a foreign file or a subdirectory) is refused, so dispose
// --force cannot be aimed at an arbitrary directory.
func TestIncompleteSavepoints(t *testing.T) {
	fsys := newFS(t)
	sp := NewSavepointDir("/sp", jobID, 7)
	m := writeSnapshot(t, fsys, sp, 7, 2)
	_, err := InspectIncomplete(fsys, sp)
	require.True(t, IsNotLeftover(err), "a complete savepoint: %v", err)

	require.NoError(t, fsys.Remove(filepath.Join(sp, MetadataFile)))
	writeFile(t, fsys, filepath.Join(sp, ".in-0.state.tmp"), "partial")
	in, err := InspectIncomplete(fsys, sp)
	require.NoError(t, err)
	require.False(t, in.Abandoned)
	require.Equal(t, 3, in.Files)
	require.Equal(t, m.Size()+int64(len("partial")), in.Bytes)
	require.Contains(t, in.Problem(), "incomplete: no _metadata")
	require.Contains(t, in.Problem(), "`flinkgo savepoint dispose --force "+sp+"` removes it")
	_, _, err = Load(fsys, sp)
	require.ErrorIs(t, err, ErrNotSnapshot)
	require.ErrorContains(t, err, "incomplete: no _metadata")

	for name, setup := range map[string]func(dir string){
		"a foreign file":  func(dir string) { writeFile(t, fsys, filepath.Join(dir, "notes.txt"), "mine") },
		"a subdirectory":  func(dir string) { require.NoError(t, fsys.MkdirAll(filepath.Join(dir, "sub"), 0o755)) },
		"another name":    nil,
		"a _metadata tmp": func(dir string) { writeFile(t, fsys, filepath.Join(dir, MetadataFile+".tmp-0011223344556677"), "x") },
	} {
		dir := NewSavepointDir("/sp", jobID, 8)
		if setup == nil {
			dir = "/sp/my-savepoints"
		}
		require.NoError(t, fsys.MkdirAll(dir, 0o755))
		writeFile(t, fsys, filepath.Join(dir, "in-0.state"), "x")
		if setup != nil {
			setup(dir)
		}
		err := DisposeIncomplete(fsys, dir)
		if name == "a _metadata tmp" {
			require.NoError(t, err, "a crash in _metadata's write leaves its tmp")
			continue
		}
		require.True(t, IsNotLeftover(err), "%s: %v", name, err)
		ok, _ := vfs.Exists(fsys, filepath.Join(dir, "in-0.state"))
		require.True(t, ok, "%s: nothing removed", name)
	}

	require.NoError(t, DisposeIncomplete(fsys, sp))
	ok, _ := vfs.Exists(fsys, sp)
	require.False(t, ok)
}

// Abandon turns a complete stop savepoint into one nothing restores from;
// the pending-stop markers name it.
func TestAbandonStopSavepoint(t *testing.T) {
	fsys := newFS(t)
	sp := NewSavepointDir("/sp", jobID, 5)
	writeSnapshot(t, fsys, sp, 5, 1)
	require.NoError(t, MarkPendingStop(fsys, base, jobID, 5, sp))
	stops, err := PendingStops(fsys, base, jobID)
	require.NoError(t, err)
	require.Equal(t, []PendingStop{{ID: 5, Dir: sp, Marker: filepath.Join(base, jobID, "stop-5")}}, stops)
	list, err := List(fsys, base, jobID)
	require.NoError(t, err)
	require.Empty(t, list, "a marker is no checkpoint")

	require.NoError(t, Abandon(fsys, sp))
	require.NoError(t, Abandon(fsys, sp), "again: nothing to do")
	_, _, err = Load(fsys, sp)
	require.ErrorContains(t, err, "abandoned: the stop that wrote it did not commit")
	in, err := InspectIncomplete(fsys, sp)
	require.NoError(t, err)
	require.True(t, in.Abandoned)
	require.NoError(t, DisposeIncomplete(fsys, sp))
}

func writeFile(t *testing.T, fsys vfs.FS, path, data string) {
	t.Helper()
	require.NoError(t, vfs.WriteFileAtomic(fsys, path, []byte(data)))
}
