package checkpoint

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Layout (the on-disk contract, docs/checkpoints.md):
//
//	<checkpoints dir>/<job id>/chk-<n>/<uid>-<subtask>.state, _metadata
//	<savepoints dir>/savepoint-<short job id>-<n>-<suffix>/  (same content)

// CheckpointDir is the directory of periodic checkpoint id.
func CheckpointDir(base, jobID string, id int64) string {
	return vfs.Join(base, jobID, "chk-"+strconv.FormatInt(id, 10))
}

// NewSavepointDir names a fresh savepoint directory under target.
func NewSavepointDir(target, jobID string, id int64) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	short := jobID
	if len(short) > 6 {
		short = short[:6]
	}
	return vfs.Join(target, fmt.Sprintf("savepoint-%s-%d-%s", short, id, hex.EncodeToString(b[:])))
}

// StateFileName names a subtask's state file inside a snapshot directory.
func StateFileName(uid string, subtask int) string {
	return uid + "-" + strconv.Itoa(subtask) + ".state"
}

// WriteStateFile writes a subtask's state into dir: tmp, fsync, rename. The
// directory itself is synced once by PublishMetadata.
func WriteStateFile(fsys vfs.FS, dir, name string, data []byte) error {
	return writeState(fsys, dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteState writes an encoded state file (in chunks) like WriteStateFile.
func WriteState(fsys vfs.FS, dir, name string, en *state.Encoded) error {
	return writeState(fsys, dir, name, func(w io.Writer) error {
		_, err := en.WriteTo(w)
		return err
	})
}

func writeState(fsys vfs.FS, dir, name string, write func(io.Writer) error) (err error) {
	if _, ok := vfs.Objects(fsys, dir); ok {
		return writeStateObject(fsys, vfs.Join(dir, name), write)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = fsys.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return fsys.Rename(tmp, filepath.Join(dir, name))
}

// PublishMetadata makes the snapshot in dir complete: sync the directory
// (so the state files' entries are durable), then write _metadata
// atomically (tmp, fsync, rename, fsync dir). An error leaves no _metadata.
// In object storage _metadata is created only if absent instead
// (publishMetadataObject).
func PublishMetadata(fsys vfs.FS, dir string, m *Metadata) error {
	data, err := EncodeMetadata(m)
	if err != nil {
		return err
	}
	if obj, ok := vfs.Objects(fsys, dir); ok {
		return publishMetadataObject(obj, dir, data)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(fsys, filepath.Join(dir, MetadataFile), data)
}

// ErrNotSnapshot means a path holds no _metadata.
var ErrNotSnapshot = errors.New("not a savepoint or checkpoint")

// ResolvePath accepts a snapshot directory or its _metadata file and returns
// the directory.
func ResolvePath(fsys vfs.FS, path string) (string, error) {
	clean := vfs.Clean(path)
	if vfs.Base(clean) == MetadataFile {
		return vfs.Dir(clean), nil
	}
	fi, err := fsys.Stat(clean)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist: %w", path, fs.ErrNotExist)
		}
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is a file, not a snapshot directory or its _metadata: %w", path, ErrNotSnapshot)
	}
	return clean, nil
}

// Load reads and decodes the _metadata of the snapshot at path (a directory
// or its _metadata file). It does not check the state files; Verify does.
func Load(fsys vfs.FS, path string) (dir string, m *Metadata, err error) {
	dir, err = ResolvePath(fsys, path)
	if err != nil {
		return "", nil, err
	}
	data, err := readRegular(fsys, vfs.Join(dir, MetadataFile), MaxMetadataSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if in, ierr := InspectIncomplete(fsys, dir); ierr == nil {
				return "", nil, fmt.Errorf("%s is not a savepoint: %s: %w", dir, in.Problem(), ErrNotSnapshot)
			}
			return "", nil, fmt.Errorf("%s has no %s: %w (an incomplete snapshot, or not a snapshot directory)", dir, MetadataFile, ErrNotSnapshot)
		}
		return "", nil, err
	}
	m, err = DecodeMetadata(data)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", vfs.Join(dir, MetadataFile), err)
	}
	return dir, m, nil
}

// Verify checks that every state file listed in m exists in dir with its
// size and checksum: a snapshot is complete iff this and Load succeed. It
// streams each file through the checksum, so verifying needs no memory for
// the state.
func Verify(fsys vfs.FS, dir string, m *Metadata) error {
	if err := verifyDBFiles(fsys, dir, m); err != nil {
		return err
	}
	return eachStateFile(dir, m, func(path string, h Handle) error {
		f, size, err := openRegular(fsys, path, h.Size)
		if err != nil {
			return stateFileError(path, h, err)
		}
		defer f.Close()
		if size != h.Size {
			return fmt.Errorf("state file %s has %d bytes, _metadata says %d: the file is truncated or was modified", path, size, h.Size)
		}
		if size < 4 {
			return fmt.Errorf("state file %s checksum mismatch: the file is corrupt", path)
		}
		crc := crc32.New(castagnoli)
		if _, err := io.CopyN(crc, f, size-4); err != nil {
			return err
		}
		var footer [4]byte
		if _, err := io.ReadFull(f, footer[:]); err != nil {
			return err
		}
		if crc.Sum32() != h.Checksum || binary.LittleEndian.Uint32(footer[:]) != h.Checksum {
			return fmt.Errorf("state file %s checksum mismatch: the file is corrupt", path)
		}
		return nil
	})
}

// VerifySizes checks that every state file listed in m is a regular file
// of its recorded size, without opening any: a quick check for listings
// (the dashboard's), which Verify completes with the checksums.
func VerifySizes(fsys vfs.FS, dir string, m *Metadata) error {
	if err := verifyDBFiles(fsys, dir, m); err != nil {
		return err
	}
	return eachStateFile(dir, m, func(path string, h Handle) error {
		fi, err := fsys.Stat(path)
		switch {
		case err != nil:
			return stateFileError(path, h, err)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): not part of a snapshot", path, fi.Mode().Type())
		case fi.Size() != h.Size:
			return fmt.Errorf("state file %s has %d bytes, _metadata says %d: the file is truncated or was modified", path, fi.Size(), h.Size)
		}
		return nil
	})
}

// eachStateFile calls fn for each state file m lists, after checking its
// name is a plain file name in dir.
func eachStateFile(dir string, m *Metadata, fn func(path string, h Handle) error) error {
	for _, op := range m.Operators {
		for _, h := range op.Subtasks {
			if h.File == "" {
				continue
			}
			if err := checkFileName(h.File); err != nil {
				return err
			}
			if err := fn(vfs.Join(dir, h.File), h); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkFileName(name string) error {
	if strings.Contains(name, "/") || strings.Contains(name, `\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("state file name %q in _metadata is not a plain file name: the metadata is corrupt or was tampered with", name)
	}
	return nil
}

// stateFileError words a failure to open a listed state file.
func stateFileError(path string, h Handle, err error) error {
	if tl := (*tooLargeError)(nil); errors.As(err, &tl) {
		return fmt.Errorf("state file %s has %d bytes, _metadata says %d: the file is truncated or was modified", path, tl.size, h.Size)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state file %s listed in _metadata is missing: the snapshot is incomplete (was it copied partially?)", path)
	}
	return err
}

// ReadStateFile reads a listed state file and checks its size and checksum.
func ReadStateFile(fsys vfs.FS, dir string, h Handle) ([]byte, error) {
	if err := checkFileName(h.File); err != nil {
		return nil, err
	}
	path := vfs.Join(dir, h.File)
	data, err := readRegular(fsys, path, h.Size)
	if err != nil {
		return nil, stateFileError(path, h, err)
	}
	if int64(len(data)) != h.Size {
		return nil, fmt.Errorf("state file %s has %d bytes, _metadata says %d: the file is truncated or was modified", path, len(data), h.Size)
	}
	// The recorded checksum is the file's footer: the body and the footer
	// must both match it.
	if len(data) < 4 || fileChecksum(data) != h.Checksum || binary.LittleEndian.Uint32(data[len(data)-4:]) != h.Checksum {
		return nil, fmt.Errorf("state file %s checksum mismatch: the file is corrupt", path)
	}
	return data, nil
}

// MaxMetadataSize bounds a _metadata file; real ones are a few KiB per
// operator and subtask.
const MaxMetadataSize = 64 << 20

// readRegular reads a regular file of at most limit bytes. Snapshot paths
// come from users (run -s, the savepoints the dashboard lists): a _metadata
// or state file that is a FIFO, a device such as /dev/zero, or a huge file
// must fail at once rather than block or exhaust memory. The type and size
// are those of the opened file (the OS filesystem opens without blocking),
// so swapping the path between a check and the open changes nothing.
func readRegular(fsys vfs.FS, path string, limit int64) ([]byte, error) {
	f, size, err := openRegular(fsys, path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF { // shrank: the caller's checks fail
		return nil, err
	}
	return data[:n], nil
}

// openRegular opens path if it is a regular file of at most limit bytes.
func openRegular(fsys vfs.FS, path string, limit int64) (vfs.File, int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file (%s): not part of a snapshot", path, fi.Mode().Type())
	case fi.Size() > limit:
		err = &tooLargeError{path: path, size: fi.Size(), limit: limit}
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

type tooLargeError struct {
	path        string
	size, limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s has %d bytes, more than the %d expected: the snapshot is corrupt", e.path, e.size, e.limit)
}

// Dispose deletes a snapshot: _metadata first (so a crash midway leaves an
// incomplete snapshot, never a complete-looking one with missing files),
// then the rest (in object storage: the objects _metadata lists, then
// whatever else is below dir).
func Dispose(fsys vfs.FS, dir string) error {
	if _, ok := vfs.Objects(fsys, dir); ok {
		return disposeObjects(fsys, dir)
	}
	if err := fsys.Remove(filepath.Join(dir, MetadataFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := fsys.SyncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fsys.RemoveAll(dir)
}

// Listed is a checkpoint directory found under a job's checkpoint dir.
type Listed struct {
	ID  int64
	Dir string
}

// List returns the chk-<n> directories of a job, newest first.
func List(fsys vfs.FS, base, jobID string) ([]Listed, error) {
	root := vfs.Join(base, jobID)
	entries, err := fsys.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Listed
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "chk-") {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimPrefix(e.Name(), "chk-"), 10, 64)
		if err != nil {
			continue
		}
		out = append(out, Listed{ID: id, Dir: vfs.Join(root, e.Name())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

// Skipped is a checkpoint that recovery passed over, and why.
type Skipped struct {
	Listed
	Err error
}

// LatestComplete returns the newest complete checkpoint of a job on disk
// and the newer ones it skipped because they were torn. dir is "" when none
// is complete. Recovery does not use it: the restore decision
// (DecideRestore) trusts what the job recorded, not the newest directory.
func LatestComplete(fsys vfs.FS, base, jobID string) (dir string, m *Metadata, skipped []Skipped, err error) {
	list, err := List(fsys, base, jobID)
	if err != nil {
		return "", nil, nil, err
	}
	for _, l := range list {
		d, md, lerr := Load(fsys, l.Dir)
		if lerr == nil {
			lerr = Verify(fsys, d, md)
		}
		if lerr == nil {
			return d, md, skipped, nil
		}
		skipped = append(skipped, Skipped{Listed: l, Err: lerr})
	}
	return "", nil, skipped, nil
}

// fileChecksum is what metadata records for a state file (Handle.Checksum):
// the CRC-32C of its bytes before the 4-byte footer, which is the footer's
// value. (The CRC of a whole file including its own CRC footer is the same
// constant for every intact file, so it could not tell two files apart.)
func fileChecksum(data []byte) uint32 {
	if len(data) < 4 {
		return crc32.Checksum(data, castagnoli)
	}
	return crc32.Checksum(data[:len(data)-4], castagnoli)
}
