package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

const (
	base  = "/ck"
	jobID = "0123456789abcdef"
)

// newFS returns an in-memory FS whose checkpoint base directory exists and
// is durable, as a configured state.checkpoints.dir is.
func newFS(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll(base, 0o755))
	require.NoError(t, mem.SyncDir("/"))
	return mem
}

// writeSnapshot does what the subtasks and the driver do for checkpoint id
// with subtasks state files: create the directory, write each state file,
// publish _metadata. It returns the directory and the metadata.
func writeSnapshot(t *testing.T, fsys vfs.FS, dir string, id int64, subtasks int) *Metadata {
	t.Helper()
	m, err := takeSnapshot(fsys, dir, id, subtasks)
	require.NoError(t, err)
	return m
}

func takeSnapshot(fsys vfs.FS, dir string, id int64, subtasks int) (*Metadata, error) {
	if err := vfs.MkdirAllDurable(fsys, dir, 0o755); err != nil { // as the driver does
		return nil, err
	}
	m := &Metadata{JobID: jobID, CheckpointID: id, Kind: Periodic.String(), MaxParallelism: 128}
	op := OperatorState{UID: "count", Type: "count", Parallelism: subtasks}
	for i := 0; i < subtasks; i++ {
		o := state.NewOperatorState()
		o.Set("data", state.Split, [][]byte{[]byte(fmt.Sprintf("checkpoint %d subtask %d", id, i))})
		data, _ := state.Encode(o, nil)
		name := StateFileName("count", i)
		if err := WriteStateFile(fsys, dir, name, data); err != nil {
			return nil, err
		}
		op.Subtasks = append(op.Subtasks, Handle{Subtask: i, File: name, Size: int64(len(data)), Checksum: fileChecksum(data)})
	}
	m.Operators = []OperatorState{op}
	return m, PublishMetadata(fsys, dir, m)
}

func names(t *testing.T, fsys vfs.FS, dir string) []string {
	t.Helper()
	entries, err := fsys.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestLayout(t *testing.T) {
	assert.Equal(t, "/ck/job/chk-7", CheckpointDir("/ck", "job", 7))
	assert.Equal(t, "src-3.state", StateFileName("src", 3))
	re := regexp.MustCompile(`^/sp/savepoint-012345-5-[0-9a-f]{6}$`)
	a, b := NewSavepointDir("/sp", jobID, 5), NewSavepointDir("/sp", jobID, 5)
	assert.Regexp(t, re, a)
	assert.Regexp(t, re, b)
	assert.NotEqual(t, a, b, "savepoint directories of the same checkpoint id differ")
	assert.Regexp(t, `^/sp/savepoint-abc-1-[0-9a-f]{6}$`, NewSavepointDir("/sp", "abc", 1), "a short job id is kept whole")
}

func TestPublishLoadVerify(t *testing.T) {
	mem := newFS(t)
	dir := CheckpointDir(base, jobID, 1)
	m := writeSnapshot(t, mem, dir, 1, 3)
	assert.Equal(t, []string{"_metadata", "count-0.state", "count-1.state", "count-2.state"}, names(t, mem, dir),
		"no temporary file left behind")

	for _, path := range []string{dir, dir + "/", filepath.Join(dir, MetadataFile)} {
		gotDir, got, err := Load(mem, path)
		require.NoError(t, err, path)
		assert.Equal(t, dir, gotDir, path)
		assert.Equal(t, m, got, path)
		require.NoError(t, Verify(mem, gotDir, got))
	}
	data, err := ReadStateFile(mem, dir, m.Operators[0].Subtasks[1])
	require.NoError(t, err)
	s, err := state.Decode(data)
	require.NoError(t, err)
	assert.Equal(t, "checkpoint 1 subtask 1", string(state.RestoreOperatorState([]*state.Snapshot{s}, 0, 1).Get("data")[0]))
}

// TestPublishSurvivesPowerLoss: once PublishMetadata returned, the
// coordinator completes the checkpoint and sinks commit; a power loss
// right after must still find it complete, in a directory created (with
// MkdirAllDurable, as the driver does) just before. crashsweep_test.go
// sweeps every crash point of the same protocol.
func TestPublishSurvivesPowerLoss(t *testing.T) {
	mem := newFS(t)
	for id := int64(1); id <= 3; id++ {
		writeSnapshot(t, mem, CheckpointDir(base, jobID, id), id, 2)
		after := mem.CrashClone(vfs.PowerLoss)
		dir, m, skipped, err := LatestComplete(after, base, jobID)
		require.NoError(t, err)
		require.Empty(t, skipped)
		require.NotNil(t, m, "checkpoint %d lost in a power loss after it was published", id)
		assert.Equal(t, CheckpointDir(base, jobID, id), dir)
		assert.Equal(t, id, m.CheckpointID)
	}
	sp := NewSavepointDir("/savepoints/new", jobID, 4)
	writeSnapshot(t, mem, sp, 4, 1)
	_, m, err := Load(mem.CrashClone(vfs.PowerLoss), sp)
	require.NoError(t, err, "a savepoint lost in a power loss after it was published")
	assert.Equal(t, int64(4), m.CheckpointID)
}

// TestPublishMetadataFaults fails each operation of PublishMetadata in
// turn: it reports the error, and leaves either no _metadata or a valid
// one (the driver then aborts and removes the directory), never a torn one.
func TestPublishMetadataFaults(t *testing.T) {
	dir := CheckpointDir(base, jobID, 1)
	prepare := func() (*vfs.MemFS, *Metadata) {
		mem := newFS(t)
		m := writeSnapshot(t, mem, dir, 1, 2)
		require.NoError(t, mem.Remove(filepath.Join(dir, MetadataFile)))
		return mem, m
	}
	mem, m := prepare()
	counter := vfs.Count(mem)
	require.NoError(t, PublishMetadata(counter.FS(), dir, m))
	total := len(counter.Ops())
	require.Positive(t, total)
	for i := 1; i <= total; i++ {
		mem, m := prepare()
		inj := vfs.OnNth(i, vfs.IsMutating, vfs.ErrNoSpace)
		err := PublishMetadata(vfs.WithFaults(mem, inj), dir, m)
		require.True(t, inj.Fired())
		require.Error(t, err, "failing %s", inj.Op())
		assert.ErrorIs(t, err, vfs.ErrNoSpace)
		if ok, _ := vfs.Exists(mem, filepath.Join(dir, MetadataFile)); ok {
			_, got, lerr := Load(mem, dir)
			require.NoError(t, lerr, "failing %s left a torn _metadata", inj.Op())
			assert.Equal(t, m, got)
		}
		for _, name := range names(t, mem, dir) {
			assert.False(t, strings.Contains(name, ".tmp"), "failing %s left %s", inj.Op(), name)
		}
	}
}

func TestWriteStateFileFaults(t *testing.T) {
	for i := 1; i <= 5; i++ { // create, write, sync, close, rename
		mem := newFS(t)
		require.NoError(t, mem.MkdirAll("/d", 0o755))
		inj := vfs.OnNth(i, func(op vfs.Op) bool { return op.Kind != vfs.OpStat }, vfs.ErrNoSpace)
		err := WriteStateFile(vfs.WithFaults(mem, inj), "/d", "x-0.state", []byte("data"))
		require.Error(t, err, "failing %s", inj.Op())
		assert.Empty(t, names(t, mem, "/d"), "failing %s left a file", inj.Op())
	}
	mem := newFS(t)
	require.NoError(t, mem.MkdirAll("/d", 0o755))
	require.NoError(t, WriteStateFile(mem, "/d", "x-0.state", []byte("data")))
	data, err := vfs.ReadFile(mem.CrashClone(vfs.ProcessCrash), "/d/x-0.state")
	require.NoError(t, err)
	assert.Equal(t, "data", string(data))
}

func TestLoadErrors(t *testing.T) {
	mem := newFS(t)
	dir := CheckpointDir(base, jobID, 1)
	m := writeSnapshot(t, mem, dir, 1, 1)
	require.NoError(t, mem.MkdirAll("/empty", 0o755))
	f, err := mem.Create("/file")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	corrupt := CheckpointDir(base, jobID, 2)
	writeSnapshot(t, mem, corrupt, 2, 1)
	data, err := vfs.ReadFile(mem, filepath.Join(corrupt, MetadataFile))
	require.NoError(t, err)
	data[20] ^= 1
	require.NoError(t, vfs.WriteFileAtomic(mem, filepath.Join(corrupt, MetadataFile), data))

	for _, tc := range []struct {
		path, want string
		notSnap    bool
	}{
		{"/nope", "/nope does not exist", false},
		{"/file", "/file is a file, not a snapshot directory or its _metadata", true},
		{"/empty", "/empty has no _metadata", true},
		{"/empty/_metadata", "/empty has no _metadata", true},
		{corrupt, corrupt + "/_metadata: _metadata checksum mismatch", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, _, err := Load(mem, tc.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.notSnap, errors.Is(err, ErrNotSnapshot))
		})
	}
	_, got, err := Load(mem, dir)
	require.NoError(t, err)
	assert.Equal(t, m, got)
}

func TestVerifyErrors(t *testing.T) {
	dir := CheckpointDir(base, jobID, 1)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, mem *vfs.MemFS, m *Metadata)
		want   string
	}{
		{"missing state file", func(t *testing.T, mem *vfs.MemFS, m *Metadata) {
			require.NoError(t, mem.Remove(filepath.Join(dir, "count-1.state")))
		}, "state file /ck/0123456789abcdef/chk-1/count-1.state listed in _metadata is missing: the snapshot is incomplete"},
		{"truncated state file", func(t *testing.T, mem *vfs.MemFS, m *Metadata) {
			f, err := mem.OpenReadWrite(filepath.Join(dir, "count-0.state"))
			require.NoError(t, err)
			require.NoError(t, f.Truncate(5))
			require.NoError(t, f.Close())
		}, fmt.Sprintf("count-0.state has 5 bytes, _metadata says %d", 0)},
		{"corrupt state file", func(t *testing.T, mem *vfs.MemFS, m *Metadata) {
			path := filepath.Join(dir, "count-0.state")
			data, err := vfs.ReadFile(mem, path)
			require.NoError(t, err)
			data[len(data)/2] ^= 1
			require.NoError(t, vfs.WriteFileAtomic(mem, path, data))
		}, "state file /ck/0123456789abcdef/chk-1/count-0.state checksum mismatch: the file is corrupt"},
		{"path in the file name", func(t *testing.T, mem *vfs.MemFS, m *Metadata) {
			m.Operators[0].Subtasks[0].File = "../chk-2/count-0.state"
		}, `state file name "../chk-2/count-0.state" in _metadata is not a plain file name`},
		{"hidden file name", func(t *testing.T, mem *vfs.MemFS, m *Metadata) {
			m.Operators[0].Subtasks[0].File = ".count-0.state.tmp"
		}, "is not a plain file name"},
		{"backslash", func(t *testing.T, mem *vfs.MemFS, m *Metadata) {
			m.Operators[0].Subtasks[0].File = `..\secret`
		}, "is not a plain file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := newFS(t)
			m := writeSnapshot(t, mem, dir, 1, 2)
			tc.damage(t, mem, m)
			err := Verify(mem, dir, m)
			require.Error(t, err)
			want := tc.want
			if strings.Contains(want, "_metadata says 0") {
				want = fmt.Sprintf("count-0.state has 5 bytes, _metadata says %d", m.Operators[0].Subtasks[0].Size)
			}
			assert.Contains(t, err.Error(), want)
		})
	}
	// A subtask without state (no file) is fine.
	mem := newFS(t)
	m := writeSnapshot(t, mem, dir, 1, 2)
	m.Operators[0].Subtasks = append(m.Operators[0].Subtasks, Handle{Subtask: 2})
	require.NoError(t, Verify(mem, dir, m))
}

// TestLatestCompleteSkipsTorn: recovery takes the newest complete
// checkpoint and says which newer ones it skipped and why.
func TestLatestCompleteSkipsTorn(t *testing.T) {
	mem := newFS(t)
	for id := int64(1); id <= 7; id++ {
		writeSnapshot(t, mem, CheckpointDir(base, jobID, id), id, 2)
	}
	chk := func(id int64) string { return CheckpointDir(base, jobID, id) }
	// 3 is complete; 4..7 are torn in different ways.
	require.NoError(t, mem.Remove(filepath.Join(chk(4), "count-1.state")))
	data, err := vfs.ReadFile(mem, filepath.Join(chk(5), "count-0.state"))
	require.NoError(t, err)
	data[3] ^= 0xff
	require.NoError(t, vfs.WriteFileAtomic(mem, filepath.Join(chk(5), "count-0.state"), data))
	meta, err := vfs.ReadFile(mem, filepath.Join(chk(6), MetadataFile))
	require.NoError(t, err)
	require.NoError(t, vfs.WriteFileAtomic(mem, filepath.Join(chk(6), MetadataFile), meta[:len(meta)-9]))
	require.NoError(t, mem.Remove(filepath.Join(chk(7), MetadataFile)))
	// Not checkpoints: ignored.
	require.NoError(t, mem.MkdirAll(filepath.Join(base, jobID, "chk-latest"), 0o755))
	require.NoError(t, mem.MkdirAll(filepath.Join(base, jobID, "shared"), 0o755))
	f, err := mem.Create(filepath.Join(base, jobID, "chk-99"))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	dir, m, skipped, err := LatestComplete(mem, base, jobID)
	require.NoError(t, err)
	assert.Equal(t, chk(3), dir)
	require.NotNil(t, m)
	assert.Equal(t, int64(3), m.CheckpointID)
	var ids []int64
	why := map[int64]string{}
	for _, s := range skipped {
		ids = append(ids, s.ID)
		assert.Equal(t, chk(s.ID), s.Dir)
		why[s.ID] = s.Err.Error()
	}
	assert.Equal(t, []int64{7, 6, 5, 4}, ids, "newest first")
	assert.Contains(t, why[7], "has no _metadata")
	assert.ErrorIs(t, skipped[0].Err, ErrNotSnapshot)
	assert.Contains(t, why[6], "truncated")
	assert.Contains(t, why[5], "checksum mismatch")
	assert.Contains(t, why[4], "missing")

	list, err := List(mem, base, jobID)
	require.NoError(t, err)
	var all []int64
	for _, l := range list {
		all = append(all, l.ID)
	}
	assert.Equal(t, []int64{7, 6, 5, 4, 3, 2, 1}, all)
}

func TestLatestCompleteNone(t *testing.T) {
	mem := newFS(t)
	dir, m, skipped, err := LatestComplete(mem, base, jobID)
	require.NoError(t, err, "a job without checkpoints")
	assert.Empty(t, dir)
	assert.Nil(t, m)
	assert.Empty(t, skipped)

	require.NoError(t, mem.MkdirAll(CheckpointDir(base, jobID, 1), 0o755))
	dir, m, skipped, err = LatestComplete(mem, base, jobID)
	require.NoError(t, err)
	assert.Empty(t, dir)
	assert.Nil(t, m)
	require.Len(t, skipped, 1)
	assert.Equal(t, int64(1), skipped[0].ID)
}

func TestListOrdersNumerically(t *testing.T) {
	mem := newFS(t)
	for _, id := range []int64{9, 10, 100, 2} {
		require.NoError(t, mem.MkdirAll(CheckpointDir(base, jobID, id), 0o755))
	}
	list, err := List(mem, base, jobID)
	require.NoError(t, err)
	var ids []int64
	for _, l := range list {
		ids = append(ids, l.ID)
	}
	assert.Equal(t, []int64{100, 10, 9, 2}, ids)
}

// TestDisposeDeletesMetadataFirst: a crash in the middle of Dispose leaves
// an incomplete snapshot, never a complete-looking one with missing files.
func TestDisposeDeletesMetadataFirst(t *testing.T) {
	dir := CheckpointDir(base, jobID, 1)
	mem := newFS(t)
	writeSnapshot(t, mem, dir, 1, 3)
	var ops []vfs.Op
	logged := vfs.WithLog(mem, func(op vfs.Op) {
		if vfs.IsMutating(op) {
			ops = append(ops, op)
		}
	})
	require.NoError(t, Dispose(logged, dir))
	require.NotEmpty(t, ops)
	assert.Equal(t, vfs.OpRemove, ops[0].Kind)
	assert.Equal(t, filepath.Join(dir, MetadataFile), ops[0].Path, "the first change removes _metadata")
	_, err := mem.Stat(dir)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	require.NoError(t, Dispose(mem, dir), "disposing twice is fine")

	counter := vfs.Count(func() *vfs.MemFS { m := newFS(t); writeSnapshot(t, m, dir, 1, 3); return m }())
	require.NoError(t, Dispose(counter.FS(), dir))
	for _, model := range []vfs.CrashModel{vfs.ProcessCrash, vfs.PowerLoss} {
		for k := 1; k <= counter.N(); k++ {
			mem := newFS(t)
			writeSnapshot(t, mem, dir, 1, 3)
			cp := vfs.CrashAt(mem, k, model)
			require.ErrorIs(t, Dispose(cp.FS(), dir), vfs.ErrCrashed)
			after := cp.Clone()
			d, m, err := Load(after, dir)
			if err != nil {
				continue // incomplete or gone: recovery skips it
			}
			assert.NoError(t, Verify(after, d, m), "%s at %s: a complete-looking snapshot with missing files", model, cp.LastOp())
		}
	}
}

// Snapshot paths come from users and from directories others may write to
// (the dashboard lists savepoint directories): special or oversized files
// must fail at once, not block on a FIFO or read /dev/zero forever.
func TestLoadRefusesSpecialAndHugeFiles(t *testing.T) {
	root := t.TempDir()
	mk := func(name string) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	zero := mk("zero")
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(zero, MetadataFile)))
	fifo := mk("fifo")
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifo, MetadataFile), 0o600))
	huge := mk("huge")
	require.NoError(t, os.WriteFile(filepath.Join(huge, MetadataFile), nil, 0o600))
	require.NoError(t, os.Truncate(filepath.Join(huge, MetadataFile), MaxMetadataSize+1))

	for dir, want := range map[string]string{zero: "is not a regular file", fifo: "is not a regular file", huge: "more than the"} {
		done := make(chan error, 1)
		go func() { _, _, err := Load(vfs.Default, dir); done <- err }()
		select {
		case err := <-done:
			require.ErrorContains(t, err, want, dir)
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) blocked", dir)
		}
	}

	state := mk("state")
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(state, "op-0.state")))
	_, err := ReadStateFile(vfs.Default, state, Handle{File: "op-0.state", Size: 100})
	require.ErrorContains(t, err, "is not a regular file")
	require.NoError(t, os.WriteFile(filepath.Join(state, "big.state"), make([]byte, 200), 0o600))
	_, err = ReadStateFile(vfs.Default, state, Handle{File: "big.state", Size: 100})
	require.ErrorContains(t, err, "has 200 bytes, _metadata says 100")

	// Verify opens without blocking and checks the opened file; VerifySizes
	// opens nothing, so a huge sparse file costs nothing.
	require.NoError(t, syscall.Mkfifo(filepath.Join(state, "fifo.state"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(state, "sparse.state"), nil, 0o600))
	require.NoError(t, os.Truncate(filepath.Join(state, "sparse.state"), 1<<40))
	meta := func(file string, size int64) *Metadata {
		return &Metadata{Operators: []OperatorState{{UID: "op", Subtasks: []Handle{{File: file, Size: size}}}}}
	}
	require.ErrorContains(t, Verify(vfs.Default, state, meta("fifo.state", 10)), "is not a regular file")
	require.ErrorContains(t, VerifySizes(vfs.Default, state, meta("fifo.state", 10)), "is not a regular file")
	require.NoError(t, VerifySizes(vfs.Default, state, meta("sparse.state", 1<<40)))
	require.ErrorContains(t, VerifySizes(vfs.Default, state, meta("sparse.state", 5)), "_metadata says 5")
}
