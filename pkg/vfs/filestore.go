package vfs

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// FileStore returns a Store kept in files of fsys below root, with an
// object store's semantics: an object is one file (its key escaped into
// one name below root/<bucket>), published through a synced temporary
// file and a rename, so that a crash leaves it whole or absent; Put with
// ifAbsent publishes with a hard link (fs.ErrExist when taken); a
// multipart upload is a directory of part files that CompleteUpload
// concatenates into the object. Buckets are created on first use.
//
// It exists for tests: over a MemFS, the object-storage code paths of the
// checkpoint storage and the file sink can be crashed at every operation
// (MemFS.CrashClone) and faults injected (WithFaults), which no real
// server allows. Tests against a real S3 server cover the protocol.
func FileStore(fsys FS, root string) Store { return FileStoreWith(fsys, root, MinPartSize) }

// FileStoreWith is FileStore with another minimum part size (S3's is
// MinPartSize), so that tests can make multipart uploads of small files.
func FileStoreWith(fsys FS, root string, minPart int64) Store {
	return &fileStore{fs: fsys, root: root, minPart: minPart}
}

type fileStore struct {
	fs      FS
	root    string
	minPart int64
	mu      sync.Mutex // one finisher of completions at a time
}

func (s *fileStore) String() string { return "files below " + s.root }

func (s *fileStore) objPath(bucket, key string) string {
	return filepath.Join(s.root, bucket, url.PathEscape(key))
}

func (s *fileStore) uploadDir(id string) string { return filepath.Join(s.root, ".uploads", id) }

func (s *fileStore) Head(_ context.Context, bucket, key string) (ObjectInfo, error) {
	s.finishPending()
	fi, err := s.fs.Stat(s.objPath(bucket, key))
	if err != nil {
		return ObjectInfo{}, err
	}
	if fi.IsDir() {
		return ObjectInfo{}, &os.PathError{Op: "head", Path: key, Err: fs.ErrNotExist}
	}
	return ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

func (s *fileStore) Get(_ context.Context, bucket, key string, off, n int64) (io.ReadCloser, error) {
	s.finishPending()
	data, err := ReadFile(s.fs, s.objPath(bucket, key))
	if err != nil {
		return nil, err
	}
	if off > int64(len(data)) {
		return nil, fmt.Errorf("get %s: range starts at %d past its %d bytes", key, off, len(data))
	}
	data = data[off:]
	if n >= 0 && n < int64(len(data)) {
		data = data[:n]
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// publish writes data to a synced temporary file and puts it in place
// with a rename (or, ifAbsent, a link), then syncs the directory.
func (s *fileStore) publish(bucket, key string, data []byte, ifAbsent bool) (err error) {
	dir := filepath.Join(s.root, bucket)
	if err := MkdirAllDurable(s.fs, dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(s.root, ".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
	if err := MkdirAllDurable(s.fs, s.root, 0o755); err != nil {
		return err
	}
	if err := writeSynced(s.fs, tmp, data); err != nil {
		_ = s.fs.Remove(tmp)
		return err
	}
	if ifAbsent {
		err = s.fs.Link(tmp, s.objPath(bucket, key))
		_ = s.fs.Remove(tmp)
	} else {
		err = s.fs.Rename(tmp, s.objPath(bucket, key))
	}
	if err != nil {
		_ = s.fs.Remove(tmp)
		return err
	}
	return s.fs.SyncDir(dir)
}

func (s *fileStore) Put(_ context.Context, bucket, key string, data []byte, ifAbsent bool) error {
	s.finishPending()
	return s.publish(bucket, key, data, ifAbsent)
}

func (s *fileStore) Copy(_ context.Context, bucket, src, dst string) error {
	data, err := ReadFile(s.fs, s.objPath(bucket, src))
	if err != nil {
		return err
	}
	return s.publish(bucket, dst, data, false)
}

func (s *fileStore) Delete(_ context.Context, bucket string, keys ...string) error {
	s.finishPending()
	for _, k := range keys {
		if err := s.fs.Remove(s.objPath(bucket, k)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return s.fs.SyncDir(filepath.Join(s.root, bucket))
}

func (s *fileStore) List(_ context.Context, bucket, prefix, delim string) ([]ObjectInfo, []string, error) {
	s.finishPending()
	entries, err := s.fs.ReadDir(filepath.Join(s.root, bucket))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var objs []ObjectInfo
	var prefixes []string
	for _, e := range entries {
		key, err := url.PathUnescape(e.Name())
		if err != nil || e.IsDir() || !strings.HasPrefix(key, prefix) {
			continue
		}
		if delim != "" {
			if i := strings.Index(key[len(prefix):], delim); i >= 0 {
				p := key[:len(prefix)+i+len(delim)]
				if !slices.Contains(prefixes, p) {
					prefixes = append(prefixes, p)
				}
				continue
			}
		}
		fi, err := e.Info()
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()})
	}
	slices.SortFunc(objs, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	slices.Sort(prefixes)
	return objs, prefixes, nil
}

func (s *fileStore) CreateUpload(_ context.Context, bucket, key string) (string, error) {
	id := strconv.FormatUint(rand.Uint64(), 36)
	dir := s.uploadDir(id)
	if err := MkdirAllDurable(s.fs, dir, 0o755); err != nil {
		return "", err
	}
	if err := WriteFileAtomic(s.fs, filepath.Join(dir, "key"), []byte(bucket+"\n"+key)); err != nil {
		return "", err
	}
	return id, nil
}

// upload checks that id is an upload of bucket/key.
func (s *fileStore) upload(bucket, key, id string) error {
	data, err := ReadFile(s.fs, filepath.Join(s.uploadDir(id), "key"))
	if err == nil {
		if done, _ := Exists(s.fs, filepath.Join(s.uploadDir(id), "complete")); done {
			err = fs.ErrNotExist
		}
	}
	if errors.Is(err, fs.ErrNotExist) || (err == nil && string(data) != bucket+"\n"+key) {
		return fmt.Errorf("upload %s of %s: %w", id, key, ErrNoUpload)
	}
	return err
}

func partName(n int) string { return fmt.Sprintf("part-%05d", n) }

func (s *fileStore) UploadPart(_ context.Context, bucket, key, id string, number int, data []byte) (string, error) {
	if err := s.upload(bucket, key, id); err != nil {
		return "", err
	}
	if err := WriteFileAtomic(s.fs, filepath.Join(s.uploadDir(id), partName(number)), data); err != nil {
		return "", err
	}
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:]), nil
}

func (s *fileStore) CopyPart(ctx context.Context, bucket, key, id string, number int, src string, off, n int64) (string, error) {
	r, err := s.Get(ctx, bucket, src, off, n)
	if err != nil {
		return "", err
	}
	data, _ := io.ReadAll(r)
	return s.UploadPart(ctx, bucket, key, id, number, data)
}

// CompleteUpload is atomic, as S3's is: once the parts are checked, the
// upload's "complete" file (written atomically in the upload's own
// directory) lists them, which ends the upload and decides the object;
// finishing it (concatenating the parts into the object) is replayed by
// the next operation after a crash (finishPending), as a server would.
func (s *fileStore) CompleteUpload(_ context.Context, bucket, key, id string, parts []Part) error {
	s.finishPending()
	if err := s.upload(bucket, key, id); err != nil {
		return err
	}
	var list []string
	for i, p := range parts {
		data, err := ReadFile(s.fs, filepath.Join(s.uploadDir(id), partName(p.Number)))
		if err != nil {
			return fmt.Errorf("complete %s: part %d: %w", key, p.Number, err)
		}
		sum := md5.Sum(data)
		if p.ETag != "" && strings.Trim(p.ETag, `"`) != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("complete %s: part %d has another ETag than %s (InvalidPart)", key, p.Number, p.ETag)
		}
		if i < len(parts)-1 && int64(len(data)) < s.minPart {
			return fmt.Errorf("complete %s: part %d has %d bytes, less than the minimum (EntityTooSmall)", key, p.Number, len(data))
		}
		list = append(list, partName(p.Number))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := WriteFileAtomic(s.fs, filepath.Join(s.uploadDir(id), "complete"), []byte(strings.Join(list, "\n"))); err != nil {
		return err
	}
	return s.finish(id)
}

// finish makes the object of the decided completion id; s.mu is held.
func (s *fileStore) finish(id string) error {
	dir := s.uploadDir(id)
	list, err := ReadFile(s.fs, filepath.Join(dir, "complete"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // finished by another operation
	}
	if err != nil {
		return err
	}
	meta, err := ReadFile(s.fs, filepath.Join(dir, "key"))
	if err != nil {
		return err
	}
	var all []byte
	for _, name := range strings.Split(string(list), "\n") {
		if name == "" {
			continue
		}
		data, err := ReadFile(s.fs, filepath.Join(dir, name))
		if err != nil {
			return err
		}
		all = append(all, data...)
	}
	bucket, key, _ := strings.Cut(string(meta), "\n")
	if err := s.publish(bucket, key, all, false); err != nil {
		return err
	}
	if err := s.fs.RemoveAll(dir); err != nil {
		return err
	}
	return s.fs.SyncDir(filepath.Join(s.root, ".uploads"))
}

// finishPending finishes completions a crash interrupted.
func (s *fileStore) finishPending() {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := s.fs.ReadDir(filepath.Join(s.root, ".uploads"))
	if err != nil {
		return
	}
	for _, e := range entries {
		if ok, _ := Exists(s.fs, filepath.Join(s.uploadDir(e.Name()), "complete")); ok {
			_ = s.finish(e.Name())
		}
	}
}

func (s *fileStore) dropUpload(id string) error {
	if err := s.fs.RemoveAll(s.uploadDir(id)); err != nil {
		return err
	}
	return s.fs.SyncDir(filepath.Join(s.root, ".uploads"))
}

func (s *fileStore) AbortUpload(_ context.Context, bucket, key, id string) error {
	if err := s.upload(bucket, key, id); err != nil {
		return err
	}
	return s.dropUpload(id)
}

func (s *fileStore) ListUploads(_ context.Context, bucket, prefix string) ([]Upload, error) {
	s.finishPending()
	entries, err := s.fs.ReadDir(filepath.Join(s.root, ".uploads"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Upload
	for _, e := range entries {
		data, err := ReadFile(s.fs, filepath.Join(s.uploadDir(e.Name()), "key"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // torn by a crash in CreateUpload: never returned
		}
		if done, _ := Exists(s.fs, filepath.Join(s.uploadDir(e.Name()), "complete")); done {
			continue
		}
		if err != nil {
			return nil, err
		}
		b, k, _ := strings.Cut(string(data), "\n")
		if b == bucket && strings.HasPrefix(k, prefix) {
			out = append(out, Upload{Key: k, ID: e.Name()})
		}
	}
	slices.SortFunc(out, func(a, b Upload) int { return strings.Compare(a.Key+a.ID, b.Key+b.ID) })
	return out, nil
}

func (s *fileStore) ListParts(_ context.Context, bucket, key, id string) ([]Part, error) {
	if err := s.upload(bucket, key, id); err != nil {
		return nil, err
	}
	entries, err := s.fs.ReadDir(s.uploadDir(id))
	if err != nil {
		return nil, err
	}
	var out []Part
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "part-%d", &n); err != nil || e.Name() != partName(n) {
			continue
		}
		data, err := ReadFile(s.fs, filepath.Join(s.uploadDir(id), e.Name()))
		if err != nil {
			return nil, err
		}
		sum := md5.Sum(data)
		out = append(out, Part{Number: n, ETag: hex.EncodeToString(sum[:]), Size: int64(len(data))})
	}
	return out, nil
}
