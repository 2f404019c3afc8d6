package engine

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/pebblestate"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Incremental checkpoints of a pebble subtask (docs/state-backends.md).
//
// At the barrier the subtask writes its store manifest, flushes and takes
// a pebble checkpoint of its DB (hard links): that is the whole stall.
// Each immutable file of the DB gets a shared name the first time a
// checkpoint holds it (SharedName: that checkpoint's id, the DB's id, the
// file's number) and keeps it while the file is in the DB; the upload, in
// the background, writes a shared file only if this subtask has not
// written it yet (a failed upload is retried by the next checkpoint that
// holds the file), then the private files (manifest, options) into the
// checkpoint's directory.
//
// Why a name is never swept while a checkpoint in progress lists it: a
// file's name is fixed from the first checkpoint u that held it; a later
// checkpoint m lists it only if the file is still in the DB, so every
// checkpoint completed between u and m held it and lists it under the
// same name, and the newest completed one is always retained. With none
// completed since u, u is at least the sweep's keepFrom (sweepKeepFrom).

// incremental is a pebble subtask's record of its DB's files in the
// checkpoint storage. capture runs on the subtask's goroutine, upload on
// the checkpoint's writer goroutine: mu guards the maps.
type incremental struct {
	store *pebblestate.Store
	fs    vfs.FS // the store's

	mu sync.Mutex
	// names maps a DB file (000012.sst) to its shared name while the
	// file is in the DB.
	names map[string]string
	// written holds the shared names known to be in the storage.
	written map[string]bool
	// uploads serializes the subtask's uploads: a file two checkpoints
	// hold is written once.
	uploads sync.Mutex
}

func newIncremental(s *pebblestate.Store, fsys vfs.FS) *incremental {
	return &incremental{store: s, fs: fsys, names: map[string]string{}, written: map[string]bool{}}
}

// adopt records the shared files of the checkpoint a subtask restored
// from as written: the next checkpoint lists them instead of writing
// them again. Only for checkpoints of the job itself: another job's
// shared files are swept by that job's retention.
func (in *incremental) adopt(db *checkpoint.DBFiles) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, f := range db.Shared {
		in.names[f.Local] = f.Name
		in.written[f.Name] = true
	}
}

// dbCapture is a pebble checkpoint taken at a barrier, to upload.
type dbCapture struct {
	dir     string // the local pebble checkpoint
	shared  []checkpoint.DBFile
	private []checkpoint.DBFile
}

// capture takes checkpoint id's files of the DB (on the subtask's
// goroutine: the barrier stall).
func (in *incremental) capture(kb *state.KeyedBackend, id int64) (*dbCapture, error) {
	if err := kb.WriteStoreManifest(); err != nil {
		return nil, err
	}
	dir := in.store.CheckpointDir(id)
	files, err := in.store.Checkpoint(dir)
	if err != nil {
		return nil, err
	}
	c := &dbCapture{dir: dir}
	in.mu.Lock()
	defer in.mu.Unlock()
	held := map[string]bool{}
	for _, f := range files {
		fi, err := in.fs.Stat(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		if !pebblestate.Shared(f) {
			c.private = append(c.private, checkpoint.DBFile{Name: f, Local: f, Size: fi.Size()})
			continue
		}
		held[f] = true
		name, ok := in.names[f]
		if !ok {
			name = checkpoint.SharedName(id, in.store.ID(), f)
			in.names[f] = name
		}
		c.shared = append(c.shared, checkpoint.DBFile{Name: name, Local: f, Size: fi.Size()})
	}
	for f, name := range in.names { // gone from the DB: never back (pebble does not reuse numbers)
		if !held[f] {
			delete(in.names, f)
			// An upload of an older checkpoint still running writes it
			// again, under the same name and bytes: harmless.
			delete(in.written, name)
		}
	}
	return c, nil
}

// upload writes what c needs into the checkpoint in chkDir on fsys and
// returns the handle's DB part and the bytes it wrote (shared files
// written by earlier checkpoints are listed, not written). The local
// checkpoint is removed either way.
func (in *incremental) upload(fsys vfs.FS, chkDir, uid string, subtask int, c *dbCapture) (*checkpoint.DBFiles, int64, error) {
	in.uploads.Lock()
	defer in.uploads.Unlock()
	defer func() { _ = in.fs.RemoveAll(c.dir) }()
	db := &checkpoint.DBFiles{ID: in.store.ID(), Dir: checkpoint.PrivateDirName(uid, subtask), Private: c.private, Shared: c.shared}
	shared := checkpoint.SharedDir(chkDir)
	if err := vfs.MkdirAllDurable(fsys, shared, 0o755); err != nil {
		return nil, 0, err
	}
	var wrote int64
	var fresh []string
	for _, f := range c.shared {
		in.mu.Lock()
		done := in.written[f.Name]
		in.mu.Unlock()
		if done {
			continue
		}
		if err := in.copyOut(fsys, filepath.Join(c.dir, f.Local), shared, f.Name); err != nil {
			return nil, 0, fmt.Errorf("upload %s: %w", f.Name, err)
		}
		wrote += f.Size
		fresh = append(fresh, f.Name)
	}
	if err := checkpoint.SyncShared(fsys, chkDir); err != nil {
		return nil, 0, err
	}
	in.mu.Lock()
	for _, n := range fresh {
		in.written[n] = true
	}
	in.mu.Unlock()
	priv := vfs.Join(chkDir, db.Dir)
	if err := vfs.MkdirAllDurable(fsys, priv, 0o755); err != nil {
		return nil, 0, err
	}
	for _, f := range c.private {
		if err := in.copyOut(fsys, filepath.Join(c.dir, f.Local), priv, f.Name); err != nil {
			return nil, 0, fmt.Errorf("upload %s: %w", f.Name, err)
		}
		wrote += f.Size
	}
	if _, ok := vfs.Objects(fsys, priv); !ok {
		if err := fsys.SyncDir(priv); err != nil {
			return nil, 0, err
		}
	}
	db.Written = wrote
	return db, wrote, nil
}

// copyOut copies a local file into dir/name of the checkpoint storage.
func (in *incremental) copyOut(fsys vfs.FS, local, dir, name string) error {
	f, err := in.fs.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkpoint.UploadFile(fsys, dir, name, f)
}

// downloadDB copies the files of an incremental checkpoint's DB (in
// chkDir on fsys) into the new DB directory dir on local.
func downloadDB(fsys vfs.FS, chkDir string, db *checkpoint.DBFiles, local vfs.FS, dir string) error {
	if err := local.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	for _, f := range db.Private {
		if err := copyBetween(fsys, vfs.Join(chkDir, db.Dir, f.Name), local, filepath.Join(dir, f.Local)); err != nil {
			return err
		}
	}
	for _, f := range db.Shared {
		if err := copyBetween(fsys, vfs.Join(checkpoint.SharedDir(chkDir), f.Name), local, filepath.Join(dir, f.Local)); err != nil {
			return err
		}
	}
	return nil
}

// canonicalFromDB is the canonical snapshot of an incremental checkpoint's
// subtask h (its state file decoded in s): its DB downloaded into a
// directory of its own beside the job's DBs, opened, and encoded with the
// state file's rest, as a savepoint of it would hold it. Rescaling (Flink
// opens each old DB and copies the key groups in range) and restoring on
// the heap both go through it; the whole subtask's state is in memory once,
// as a canonical restore's state file is.
func canonicalFromDB(env *Env, jobID, uid string, r *Restore, h checkpoint.Handle, s *state.Snapshot, maxPar int) (*state.Snapshot, error) {
	local, root := env.pebble()
	dir := filepath.Join(root, jobID, fmt.Sprintf("restore-%s-%d", uid, h.Subtask))
	_ = local.RemoveAll(dir)
	defer func() {
		_ = local.RemoveAll(dir)
		_ = local.Remove(filepath.Dir(dir)) // the job's directory, once empty
	}()
	if err := downloadDB(env.FS, r.Dir, h.DB, local, dir); err != nil {
		return nil, err
	}
	store, err := pebblestate.Open(local, dir)
	if err != nil {
		return nil, err
	}
	kb := state.NewKeyedBackendOn(maxPar, state.KeyGroupRange{Start: h.KeyStart, End: h.KeyEnd}, store)
	defer kb.Close()
	if err := kb.RestoreStore(); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Dir, err)
	}
	kb.Restore([]*state.Snapshot{s})
	data, _ := state.Encode(state.RestoreOperatorState([]*state.Snapshot{s}, 0, 1), kb)
	return state.Decode(data)
}

// copyBetween copies src on from into dst on to.
func copyBetween(from vfs.FS, src string, to vfs.FS, dst string) error {
	in, err := from.Open(src)
	if err != nil {
		return fmt.Errorf("restore %s: %w", src, err)
	}
	defer in.Close()
	out, err := to.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("restore %s: %w", src, err)
	}
	return out.Close()
}
