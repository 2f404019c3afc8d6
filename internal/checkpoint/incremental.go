package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Incremental checkpoints of the pebble state backend
// (docs/state-backends.md). A subtask's DB files are either shared
// (immutable SST and blob files, written once and referenced by every
// later checkpoint that still needs them) or private (MANIFEST, OPTIONS,
// markers: small, rewritten with each checkpoint):
//
//	<checkpoints dir>/<job>/shared/c<n>-<db id>-<file>.sst
//	<checkpoints dir>/<job>/chk-<n>/<uid>-<subtask>.db/<file>
//
// n in a shared name is the checkpoint that uploaded the file: the sweep
// (SharedGarbage) keeps every file a checkpoint still in progress may have
// uploaded. A shared name is unique (a DB id is random, pebble never reuses
// a file number), so a name is never written twice with other bytes.

// SharedDirName is the directory of a job's shared files, beside chk-<n>.
const SharedDirName = "shared"

// DBFiles lists the files of a subtask's pebble DB that an incremental
// checkpoint holds: everything a restore downloads to open the DB.
type DBFiles struct {
	// ID is the DB's id: the shared files it uploaded carry it.
	ID string `json:"id"`
	// Dir holds the private files, inside the checkpoint's directory.
	Dir     string   `json:"dir"`
	Private []DBFile `json:"private"`
	// Shared files are in the job's shared directory (SharedDir).
	Shared []DBFile `json:"shared"`
	// Written is what this checkpoint wrote of them: the private files
	// and the shared ones no earlier checkpoint had written.
	Written int64 `json:"written"`
}

// DBFile is one file of a DB in the checkpoint storage.
type DBFile struct {
	Name  string `json:"name"`  // in the storage
	Local string `json:"local"` // in the DB's directory
	Size  int64  `json:"size"`
}

// Size is what the listed files hold.
func (d *DBFiles) Size() int64 {
	var n int64
	for _, f := range d.Private {
		n += f.Size
	}
	for _, f := range d.Shared {
		n += f.Size
	}
	return n
}

// SharedDir is the shared directory of the checkpoint in chkDir
// (<job dir>/shared): incremental checkpoints are not self-contained, a
// copy of chk-<n> alone cannot be restored.
func SharedDir(chkDir string) string { return vfs.Join(vfs.Dir(vfs.Clean(chkDir)), SharedDirName) }

// PrivateDirName names a subtask's private DB files inside a checkpoint.
func PrivateDirName(uid string, subtask int) string {
	return uid + "-" + strconv.Itoa(subtask) + ".db"
}

// SharedName names a shared file: the checkpoint that uploads it, the
// DB's id and the file's name in the DB (000012.sst).
func SharedName(uploadedBy int64, dbID, local string) string {
	return fmt.Sprintf("c%d-%s-%s", uploadedBy, dbID, local)
}

// sharedName matches SharedName's names (and nothing else: the sweep
// leaves any other file alone).
var sharedName = regexp.MustCompile(`^c([0-9]{1,18})-[0-9a-f]{16}-[0-9]{1,12}\.(sst|blob)$`)

// uploadedBy parses a shared file's name (or writeState's temporary file
// of one): the checkpoint that uploaded it.
func uploadedBy(name string) (int64, bool) {
	if t, ok := strings.CutPrefix(name, "."); ok {
		name, ok = strings.CutSuffix(t, ".tmp")
		if !ok {
			return 0, false
		}
	}
	m := sharedName.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	return id, err == nil
}

// checkDBFiles checks the names of d are plain names in their directory.
func checkDBFiles(d *DBFiles) error {
	if err := checkFileName(d.Dir); err != nil {
		return err
	}
	for _, f := range d.Private {
		if err := checkFileName(f.Name); err != nil {
			return err
		}
	}
	for _, f := range d.Shared {
		if _, ok := uploadedBy(f.Name); !ok || strings.HasPrefix(f.Name, ".") {
			return fmt.Errorf("shared file name %q in _metadata is not one flinkgo writes: the metadata is corrupt or was tampered with", f.Name)
		}
	}
	return nil
}

// eachDBFile calls fn with the path and record of every DB file m lists.
func eachDBFile(dir string, m *Metadata, fn func(path string, f DBFile) error) error {
	for _, op := range m.Operators {
		for _, h := range op.Subtasks {
			if h.DB == nil {
				continue
			}
			if err := checkDBFiles(h.DB); err != nil {
				return err
			}
			for _, f := range h.DB.Private {
				if err := fn(vfs.Join(dir, h.DB.Dir, f.Name), f); err != nil {
					return err
				}
			}
			for _, f := range h.DB.Shared {
				if err := fn(vfs.Join(SharedDir(dir), f.Name), f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// verifyDBFiles checks that every DB file m lists is a regular file of
// its recorded size (pebble checks the blocks' checksums as it reads).
func verifyDBFiles(fsys vfs.FS, dir string, m *Metadata) error {
	return eachDBFile(dir, m, func(path string, f DBFile) error {
		fi, err := fsys.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("state file %s listed in %s is missing: the incremental checkpoint cannot be restored (was its shared directory deleted or not copied?)", path, vfs.Join(dir, MetadataFile))
		case err != nil:
			return err
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): not part of a snapshot", path, fi.Mode().Type())
		case fi.Size() != f.Size:
			return fmt.Errorf("state file %s has %d bytes, _metadata says %d: the file is truncated or was modified", path, fi.Size(), f.Size)
		}
		return nil
	})
}

// CheckpointedSize is what writing the snapshot wrote (Flink's
// checkpointedSize), and whether it is incremental: otherwise it is Size.
func (m *Metadata) CheckpointedSize() (n int64, incremental bool) {
	for _, op := range m.Operators {
		for _, h := range op.Subtasks {
			n += h.Size
			if h.DB != nil {
				n += h.DB.Written
				incremental = true
			}
		}
	}
	return n, incremental
}

// Referenced returns the shared names the metadata lists.
func Referenced(m *Metadata) []string {
	var out []string
	for _, op := range m.Operators {
		for _, h := range op.Subtasks {
			if h.DB != nil {
				for _, f := range h.DB.Shared {
					out = append(out, f.Name)
				}
			}
		}
	}
	return out
}

// SharedGarbage is the sweep's decision, pure: of the files present in a
// job's shared directory, those to delete. live holds the metadata of
// every complete checkpoint of the job (the retained ones, and any other
// still on disk with a _metadata); a file is kept when one of them lists
// it, when a checkpoint from keepFrom on uploaded it (one in progress may
// complete and list it), or when its name is not one flinkgo writes.
// Everything else no complete checkpoint can ever need again: a
// checkpoint in progress lists only files it uploaded itself or that its
// newest complete predecessor lists (see docs/state-backends.md).
//
// newest is the newest retained checkpoint when keepFrom was decided (0:
// none). live must hold it or a newer one: one missing means retention
// disposed of it while the sweep read the metadata, and a newer one that
// lists the same files completed after the sweep listed the directories;
// then nothing is deleted (the next sweep will).
func SharedGarbage(live []*Metadata, present []string, keepFrom, newest int64) []string {
	used := map[string]bool{}
	var top int64
	for _, m := range live {
		top = max(top, m.CheckpointID)
		for _, n := range Referenced(m) {
			used[n] = true
		}
	}
	if top < newest {
		return nil
	}
	var out []string
	for _, name := range present {
		id, ours := uploadedBy(name)
		if !ours || id >= keepFrom {
			continue
		}
		tmp := strings.HasPrefix(name, ".")
		if tmp || !used[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// SweepShared deletes the files of the job's shared directory (under
// base/jobID) that SharedGarbage finds. The decision is made from the
// durable metadata only, so a crash at any point of the sweep deletes
// nothing a complete checkpoint lists, and the next sweep finishes it.
// A checkpoint directory whose _metadata cannot be read (corrupt, not
// merely absent) stops the sweep: what it lists is unknown.
func SweepShared(fsys vfs.FS, base, jobID string, keepFrom, newest int64) (deleted []string, err error) {
	shared := vfs.Join(base, jobID, SharedDirName)
	entries, err := fsys.ReadDir(shared)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	present := make([]string, 0, len(entries))
	for _, e := range entries {
		present = append(present, e.Name())
	}
	list, err := List(fsys, base, jobID)
	if err != nil {
		return nil, err
	}
	var live []*Metadata
	for _, l := range list {
		if _, serr := fsys.Stat(vfs.Join(l.Dir, MetadataFile)); errors.Is(serr, fs.ErrNotExist) {
			continue // no _metadata: in progress (its uploads are kept) or torn
		}
		_, m, err := Load(fsys, l.Dir)
		if err != nil {
			return nil, fmt.Errorf("sweep of %s stopped, nothing deleted: %s: %w", shared, l.Dir, err)
		}
		live = append(live, m)
	}
	for _, name := range SharedGarbage(live, present, keepFrom, newest) {
		if err := fsys.Remove(vfs.Join(shared, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return deleted, err
		}
		deleted = append(deleted, name)
	}
	return deleted, nil
}

// UploadFile writes src as dir/name, as a state file is written (tmp,
// fsync, rename; in object storage one object): name appears whole or not
// at all. The directory is synced by PublishMetadata, or by SyncShared for
// the shared directory.
func UploadFile(fsys vfs.FS, dir, name string, src io.Reader) error {
	return writeState(fsys, dir, name, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// SyncShared makes the shared files uploaded for a checkpoint durable
// before its _metadata lists them (a no-op in object storage).
func SyncShared(fsys vfs.FS, chkDir string) error {
	if _, ok := vfs.Objects(fsys, chkDir); ok {
		return nil
	}
	return fsys.SyncDir(SharedDir(chkDir))
}
