// Package pebblestate is a subtask's keyed state store on pebble (the
// pebble state backend, docs/state-backends.md): a state.Store over one
// pebble DB per subtask attempt, without a write-ahead log, since the
// checkpoint and not the DB is what a restore reads.
package pebblestate

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flinkgo/flinkgo/internal/pebblefs"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Store is a pebble DB as a state.Store.
type Store struct {
	db  *pebble.DB
	fs  vfs.FS
	dir string
	buf []byte
}

// batchBytes is how much a bulk load puts in one batch.
const batchBytes = 4 << 20

// Open opens (creating) a DB in dir on fsys.
func Open(fsys vfs.FS, dir string) (*Store, error) {
	if err := fsys.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	opts := &pebble.Options{
		FS:         pebblefs.New(fsys),
		DisableWAL: true, // the checkpoint is the durability point
		Logger:     quietLogger{},
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open pebble state in %s: %w", dir, err)
	}
	return &Store{db: db, fs: fsys, dir: dir}, nil
}

// Dir is the DB's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) Get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	s.buf = append(s.buf[:0], v...)
	return s.buf, true, closer.Close()
}

func (s *Store) Set(key, value []byte) error { return s.db.Set(key, value, pebble.NoSync) }

func (s *Store) Delete(key []byte) error { return s.db.Delete(key, pebble.NoSync) }

func (s *Store) SetAll(seq iter.Seq2[[]byte, []byte]) error {
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
	return db.Close()
}

// Remove closes the DB and deletes its directory.
func (s *Store) Remove() error {
	err := s.Close()
	if rerr := s.fs.RemoveAll(s.dir); err == nil {
		err = rerr
	}
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
	dir := SubtaskDir(root, job, uid, subtask, attempt)
	es, err := fsys.ReadDir(filepath.Dir(dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range es {
		if isAttemptOf(e.Name(), uid, subtask) {
			if err := fsys.RemoveAll(filepath.Join(filepath.Dir(dir), e.Name())); err != nil {
				return nil, fmt.Errorf("remove the pebble state an earlier attempt left: %w", err)
			}
		}
	}
	return Open(fsys, dir)
}
