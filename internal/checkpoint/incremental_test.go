package checkpoint

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// sh names a shared file uploaded by checkpoint id (file number n).
func sh(id int64, n int) string {
	return SharedName(id, "0123456789abcdef", fmt.Sprintf("%06d.sst", n))
}

// metaListing is the metadata of checkpoint id of one subtask whose DB
// holds the shared files names.
func metaListing(id int64, names ...string) *Metadata {
	db := &DBFiles{ID: "0123456789abcdef", Dir: PrivateDirName("op", 0),
		Private: []DBFile{{Name: "MANIFEST-000001", Local: "MANIFEST-000001", Size: 3}}}
	for _, n := range names {
		db.Shared = append(db.Shared, DBFile{Name: n, Local: n[len(n)-10:], Size: int64(len(n))})
	}
	return &Metadata{JobID: "job", JobName: "incr", CheckpointID: id, Kind: Periodic.String(), MaxParallelism: 128,
		Operators: []OperatorState{{UID: "op", Type: "count", Parallelism: 1, Subtasks: []Handle{{Subtask: 0, DB: db}}}}}
}

func TestSharedGarbage(t *testing.T) {
	tests := []struct {
		name     string
		live     []*Metadata
		present  []string
		keepFrom int64
		newest   int64 // 0: the newest of live
		want     []string
	}{
		{name: "nothing present", live: []*Metadata{metaListing(3, sh(1, 1))}, keepFrom: 4},
		{name: "every file listed by a retained checkpoint stays",
			live:    []*Metadata{metaListing(3, sh(1, 1), sh(3, 2)), metaListing(4, sh(3, 2), sh(4, 3))},
			present: []string{sh(1, 1), sh(3, 2), sh(4, 3)}, keepFrom: 5},
		{name: "a file only a discarded checkpoint listed goes",
			live:    []*Metadata{metaListing(4, sh(3, 2), sh(4, 3))},
			present: []string{sh(1, 1), sh(3, 2), sh(4, 3)}, keepFrom: 5, want: []string{sh(1, 1)}},
		{name: "an aborted checkpoint's uploads go",
			live:    []*Metadata{metaListing(4, sh(4, 3))},
			present: []string{sh(2, 7), sh(2, 8), sh(4, 3)}, keepFrom: 5, want: []string{sh(2, 7), sh(2, 8)}},
		{name: "uploads of a checkpoint in progress stay, listed or not",
			live:    []*Metadata{metaListing(4, sh(4, 3))},
			present: []string{sh(4, 3), sh(5, 9), sh(6, 10)}, keepFrom: 5},
		{name: "no complete checkpoint: everything older than keepFrom goes",
			present: []string{sh(1, 1), sh(2, 2), sh(3, 3)}, keepFrom: 3, want: []string{sh(1, 1), sh(2, 2)}},
		{name: "a temporary file of an old upload goes, of a running one stays",
			live:    []*Metadata{metaListing(4, sh(3, 2))},
			present: []string{"." + sh(3, 2) + ".tmp", "." + sh(5, 4) + ".tmp", sh(3, 2)}, keepFrom: 5,
			want: []string{"." + sh(3, 2) + ".tmp"}},
		{name: "files flinkgo does not name stay",
			present: []string{"notes.txt", "000001.sst", "c1-xyz-000001.sst", ".hidden"}, keepFrom: 9},
		{name: "the newest retained checkpoint disposed while the sweep read: nothing goes",
			live:    []*Metadata{metaListing(3, sh(3, 2))},
			present: []string{sh(1, 1), sh(3, 2), sh(4, 3)}, keepFrom: 5, newest: 4},
		{name: "a newer complete checkpoint than the newest retained is as good",
			live:    []*Metadata{metaListing(5, sh(4, 3))},
			present: []string{sh(1, 1), sh(4, 3)}, keepFrom: 5, newest: 4, want: []string{sh(1, 1)}},
		{name: "a file listed by any of several subtasks' checkpoints stays",
			live:    []*Metadata{metaListing(7, sh(2, 1)), metaListing(8, sh(8, 5))},
			present: []string{sh(2, 1), sh(8, 5), sh(6, 6)}, keepFrom: 9, want: []string{sh(6, 6)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			newest := tc.newest
			for _, m := range tc.live {
				if tc.newest == 0 {
					newest = max(newest, m.CheckpointID)
				}
			}
			require.Equal(t, tc.want, SharedGarbage(tc.live, tc.present, tc.keepFrom, newest))
		})
	}
}

// sweepFixture lays out a job's checkpoints: chk-3 and chk-4 complete,
// chk-2 torn (no _metadata), and in shared/ the files they list, one only
// a discarded checkpoint listed, an upload of checkpoint 5 (in progress)
// and an old temporary file.
func sweepFixture(t *testing.T, fsys vfs.FS) (needed, garbage []string) {
	const base = "/ck"
	needed = []string{sh(1, 1), sh(3, 2), sh(4, 3), sh(5, 4)}
	garbage = []string{"." + sh(2, 10) + ".tmp", sh(1, 8), sh(2, 9)}
	shared := vfs.Join(base, "job", SharedDirName)
	require.NoError(t, vfs.MkdirAllDurable(fsys, shared, 0o755))
	for _, n := range append(append([]string{}, needed...), garbage...) {
		require.NoError(t, UploadFile(fsys, shared, n, bytes.NewReader([]byte(n))))
	}
	require.NoError(t, fsys.SyncDir(shared))
	require.NoError(t, vfs.MkdirAllDurable(fsys, CheckpointDir(base, "job", 2), 0o755))
	for id, names := range map[int64][]string{3: {sh(1, 1), sh(3, 2)}, 4: {sh(3, 2), sh(4, 3)}} {
		dir := CheckpointDir(base, "job", id)
		require.NoError(t, vfs.MkdirAllDurable(fsys, vfs.Join(dir, PrivateDirName("op", 0)), 0o755))
		require.NoError(t, vfs.WriteFileAtomic(fsys, vfs.Join(dir, PrivateDirName("op", 0), "MANIFEST-000001"), []byte("man")))
		m := metaListing(id, names...)
		for i := range m.Operators[0].Subtasks[0].DB.Shared {
			m.Operators[0].Subtasks[0].DB.Shared[i].Size = int64(len(names[i]))
		}
		require.NoError(t, PublishMetadata(fsys, dir, m))
		_, got, err := Load(fsys, dir)
		require.NoError(t, err)
		require.NoError(t, Verify(fsys, dir, got))
	}
	return needed, garbage
}

func sharedNames(t *testing.T, fsys vfs.FS) []string {
	es, err := fsys.ReadDir("/ck/job/shared")
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestSweepSharedDeletesGarbageOnly(t *testing.T) {
	fsys := vfs.NewMem()
	needed, garbage := sweepFixture(t, fsys)
	deleted, err := SweepShared(fsys, "/ck", "job", 5, 4)
	require.NoError(t, err)
	require.ElementsMatch(t, garbage, deleted)
	require.ElementsMatch(t, needed, sharedNames(t, fsys))
	again, err := SweepShared(fsys, "/ck", "job", 5, 4)
	require.NoError(t, err)
	require.Empty(t, again)
}

// A crash at every mutating operation of a sweep (process crash and power
// loss) leaves every file a complete checkpoint lists, and every upload
// of the checkpoint in progress; the next sweep deletes the rest.
func TestSweepSharedCrashKeepsNeeded(t *testing.T) {
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		for k := 1; ; k++ {
			mem := vfs.NewMem()
			needed, _ := sweepFixture(t, mem)
			cp := vfs.CrashAt(mem, k, model)
			_, err := SweepShared(cp.FS(), "/ck", "job", 5, 4)
			if !cp.Crashed() {
				require.NoError(t, err)
				require.Greater(t, k, 3, "the sweep deletes three files")
				break
			}
			after := cp.Clone()
			require.Subset(t, sharedNames(t, after), needed, "%s at operation %d (%s)", model, k, cp.LastOp())
			_, err = SweepShared(after, "/ck", "job", 5, 4)
			require.NoError(t, err)
			require.ElementsMatch(t, needed, sharedNames(t, after), "%s at operation %d: the next sweep", model, k)
			for _, id := range []int64{3, 4} {
				dir, m, err := Load(after, CheckpointDir("/ck", "job", id))
				require.NoError(t, err)
				require.NoError(t, Verify(after, dir, m))
			}
		}
	}
}

// A checkpoint whose _metadata is unreadable stops the sweep: what it
// lists is unknown, so nothing is deleted.
func TestSweepSharedStopsAtCorruptMetadata(t *testing.T) {
	fsys := vfs.NewMem()
	needed, garbage := sweepFixture(t, fsys)
	dir := CheckpointDir("/ck", "job", 1)
	require.NoError(t, vfs.MkdirAllDurable(fsys, dir, 0o755))
	require.NoError(t, vfs.WriteFileAtomic(fsys, vfs.Join(dir, MetadataFile), []byte("FGMETA\r\ngarbage")))
	deleted, err := SweepShared(fsys, "/ck", "job", 5, 4)
	require.ErrorContains(t, err, "nothing deleted")
	require.ErrorContains(t, err, "chk-1")
	require.Empty(t, deleted)
	require.ElementsMatch(t, append(needed, garbage...), sharedNames(t, fsys))
}

// Verify names a missing shared file and the checkpoint that lists it.
func TestVerifyIncrementalMissingSharedFile(t *testing.T) {
	fsys := vfs.NewMem()
	sweepFixture(t, fsys)
	require.NoError(t, fsys.Remove("/ck/job/shared/"+sh(1, 1)))
	dir, m, err := Load(fsys, CheckpointDir("/ck", "job", 3))
	require.NoError(t, err)
	err = Verify(fsys, dir, m)
	require.ErrorContains(t, err, sh(1, 1))
	require.ErrorContains(t, err, "chk-3/_metadata")
	require.ErrorContains(t, err, "missing")
}
