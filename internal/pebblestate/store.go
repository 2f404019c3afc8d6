// Package pebblestate is a subtask's keyed state store on pebble (the
// pebble state backend, docs/state-backends.md): a state.Store over one
// pebble DB per subtask attempt, without a write-ahead log, since the
// checkpoint and not the DB is what a restore reads.
package pebblestate

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"

	"github.com/flinkgo/flinkgo/internal/pebblefs"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Store is a pebble DB as a state.Store. Writes go into an indexed batch
// that reads see, committed when it holds batchBytes and before a scan:
// one commit per thousands of records instead of one per record.
type Store struct {
	id    string // random: names the files it uploads (ID)
	db    *pebble.DB
	fs    vfs.FS
	dir   string
	buf   []byte
	batch *pebble.Batch
}

// batchBytes is how much a batch (writes, or a bulk load) holds before
// it is committed. Pebble counts a batch's entries at their largest
// skiplist node (~200 bytes for a small one), so 4 MiB of small entries
// is more than half a memtable: pebble queues such a batch as a memtable
// of its own and flushes it to a level 0 file, which is fast for a stream
// of new keys (1 M keys: 3.0-3.7 s, against 15-32 s for batches of 4,096
// entries applied to the memtable, same machine, interleaved). Beyond
// ~2 M keys the compactions these files cause slow it down (3 M keys:
// 88 s); tuning that is not done.
const batchBytes = 4 << 20

// memTableBytes is the size of a memtable (pebble's default is 4 MiB):
// fewer, larger flushes keep level 0 small for a stream of new keys
// (32 MiB was no faster than 16 at 1 M keys).
const memTableBytes = 16 << 20

// cacheBytes is the block cache of one DB (pebble's default is 8 MiB).
// With a stream of new keys every Get misses, and reads bloom filters and
// index blocks: at 1 M keys 8 MiB took 8.8 s, 32 MiB 5.9 s, for the same
// peak RSS (BenchmarkPebbleVsHeap's child at 1 M keys).
const cacheBytes = 32 << 20

// maxManifestBytes bounds the MANIFEST, which a pebble checkpoint copies
// whole into every incremental checkpoint.
const maxManifestBytes = 1 << 20

// Open opens (creating) a DB in dir on fsys.
func Open(fsys vfs.FS, dir string) (*Store, error) {
	if err := fsys.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	cache := pebble.NewCache(cacheBytes)
	opts := &pebble.Options{
		FS:           pebblefs.New(fsys),
		DisableWAL:   true, // the checkpoint is the durability point
		Logger:       quietLogger{},
		MemTableSize: memTableBytes,
		Cache:        cache,
		// Every incremental checkpoint uploads the MANIFEST whole (it is
		// rewritten, not shared): roll it over at 1 MiB instead of
		// pebble's 128 MiB, so it stays the size of the current version.
		MaxManifestFileSize: maxManifestBytes,
	}
	// A Get of a new key (every first record of a key) misses: bloom
	// filters answer it without reading each level's blocks.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, opts)
	cache.Unref() // the DB holds its own reference
	if err != nil {
		return nil, fmt.Errorf("open pebble state in %s: %w", dir, err)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Store{id: hex.EncodeToString(id[:]), db: db, fs: fsys, dir: dir, batch: db.NewIndexedBatch()}, nil
}

// ID is the DB's id: 16 hex digits, random, so the files of two DBs
// never share a name in a checkpoint's shared directory.
func (s *Store) ID() string { return s.id }

// CheckpointDir is where Checkpoint puts checkpoint id's files: beside
// the DB, removed with it.
func (s *Store) CheckpointDir(id int64) string {
	return filepath.Join(s.dir+checkpointsSuffix, strconv.FormatInt(id, 10))
}

const checkpointsSuffix = ".chk"

// Checkpoint writes what is pending, flushes the memtables and takes a
// pebble checkpoint of the DB into dest (hard links to its immutable
// files, copies of the manifest and options): the synchronous part of an
// incremental checkpoint, whose cost is a flush of what changed since
// the last one, not the size of the state. It returns the names of the
// files in dest.
func (s *Store) Checkpoint(dest string) ([]string, error) {
	if err := s.commit(); err != nil {
		return nil, err
	}
	if err := s.db.Flush(); err != nil {
		return nil, err
	}
	if err := s.fs.MkdirAll(filepath.Dir(dest), 0o777); err != nil {
		return nil, err
	}
	if err := s.db.Checkpoint(dest); err != nil {
		return nil, fmt.Errorf("pebble checkpoint into %s: %w", dest, err)
	}
	es, err := s.fs.ReadDir(dest)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(es))
	for _, e := range es {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Shared reports whether a file of a pebble checkpoint is immutable (a
// table or blob file, written once under a number pebble never reuses),
// so a later checkpoint can reference the copy an earlier one uploaded.
func Shared(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// commit writes the pending batch into the DB.
func (s *Store) commit() error {
	if s.batch.Empty() {
		return nil
	}
	if err := s.batch.Commit(pebble.NoSync); err != nil {
		return err
	}
	s.batch.Close()
	s.batch = s.db.NewIndexedBatch()
	return nil
}

// full commits the batch once it holds batchBytes.
func (s *Store) full() error {
	if s.batch.Len() < batchBytes {
		return nil
	}
	return s.commit()
}

// Dir is the DB's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) Get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.batch.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	s.buf = append(s.buf[:0], v...)
	return s.buf, true, closer.Close()
}

func (s *Store) Set(key, value []byte) error {
	if err := s.batch.Set(key, value, nil); err != nil {
		return err
	}
	return s.full()
}

func (s *Store) Delete(key []byte) error {
	if err := s.batch.Delete(key, nil); err != nil {
		return err
	}
	return s.full()
}

func (s *Store) SetAll(seq iter.Seq2[[]byte, []byte]) error {
	if err := s.commit(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	var err error
	for k, v := range seq {
		if err = b.Set(k, v, nil); err != nil {
			break
		}
		if b.Len() >= batchBytes {
			if err = b.Commit(pebble.NoSync); err != nil {
				break
			}
			b.Reset()
		}
	}
	if err == nil && !b.Empty() {
		err = b.Commit(pebble.NoSync)
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) Scan(lo, hi []byte, fn func(key, value []byte) error) error {
	if err := s.commit(); err != nil {
		return err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(it.Key(), v)
		}
		if err != nil {
			_ = it.Close()
			return err
		}
	}
	return it.Close()
}

// Close closes the DB; its files stay (Remove deletes them).
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	db := s.db
	s.db = nil
	err := s.batch.Close() // uncommitted writes are dropped: nothing reads them
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove closes the DB and deletes its directory, and the job's directory
// above it once no other subtask's DB is left there.
func (s *Store) Remove() error {
	err := s.Close()
	if rerr := s.fs.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	if rerr := s.fs.RemoveAll(s.dir + checkpointsSuffix); err == nil {
		err = rerr
	}
	_ = s.fs.Remove(filepath.Dir(s.dir)) // fails while another DB is there
	return err
}

// quietLogger drops pebble's informational lines; a fatal error panics,
// which fails the subtask.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// SubtaskDir is the directory of one subtask attempt's DB under root:
// <root>/<job>/<uid>-<subtask>-a<attempt>.
func SubtaskDir(root, job, uid string, subtask, attempt int) string {
	return filepath.Join(root, job, fmt.Sprintf("%s-%d-a%d", uid, subtask, attempt))
}

// isAttemptOf reports whether name is a directory of some attempt of
// subtask of uid ("<uid>-<subtask>-a<n>").
func isAttemptOf(name, uid string, subtask int) bool {
	rest, ok := strings.CutPrefix(name, fmt.Sprintf("%s-%d-a", uid, subtask))
	rest = strings.TrimSuffix(rest, checkpointsSuffix)
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 32)
	return err == nil
}

// OpenSubtask opens the DB of a subtask attempt, removing first what
// earlier attempts of the same subtask left (a failed attempt, a killed
// daemon): their state is in the checkpoint, never in these files.
func OpenSubtask(fsys vfs.FS, root, job, uid string, subtask, attempt int) (*Store, error) {
	dir, err := PrepareSubtask(fsys, root, job, uid, subtask, attempt)
	if err != nil {
		return nil, err
	}
	return Open(fsys, dir)
}

// PrepareSubtask removes what earlier attempts of a subtask left (see
// OpenSubtask) and returns the directory of this attempt's DB, for a
// restore to put an incremental checkpoint's files into before Open.
func PrepareSubtask(fsys vfs.FS, root, job, uid string, subtask, attempt int) (string, error) {
	dir := SubtaskDir(root, job, uid, subtask, attempt)
	es, err := fsys.ReadDir(filepath.Dir(dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	for _, e := range es {
		if isAttemptOf(e.Name(), uid, subtask) {
			if err := fsys.RemoveAll(filepath.Join(filepath.Dir(dir), e.Name())); err != nil {
				return "", fmt.Errorf("remove the pebble state an earlier attempt left: %w", err)
			}
		}
	}
	return dir, nil
}
