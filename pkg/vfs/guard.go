package vfs

import (
	"context"
	"errors"
	"fmt"
)

// Guarded returns fsys with every change refused while refuse returns an
// error (nil lets the change through); reads always go on. It is how a
// daemon that may have lost a job (HA mode's fence) writes nothing more for
// it, on a disk and in object storage alike:
//
//   - on a local FS every mutating operation (IsMutating: create, write,
//     sync, truncate, rename, link, remove, mkdir, directory sync) is
//     checked before it runs, through WithFaults;
//   - on an ObjectFS (alone or in a Mux) every store request that changes
//     the bucket (Put, Copy, Delete, and every multipart request but the
//     listings) is checked before it is sent. This is the right grain for
//     objects, where a file's bytes reach the store in Close or in parts,
//     not in Write. The result is still an ObjectFS (or a Mux with one), so
//     Objects finds it and checkpoints and the file sink keep the object
//     store's ways: _metadata created only if absent, parts completed on
//     commit.
//
// A refused request is not sent and not counted by any Meter. The error
// wraps refuse's. refuse must be cheap: it runs before each change.
func Guarded(fsys FS, refuse func() error) FS {
	check := func(op Op) error {
		if !IsMutating(op) {
			return nil
		}
		return refuse()
	}
	switch f := fsys.(type) {
	case *ObjectFS:
		return f.guarded(refuse)
	case *muxFS:
		m := &muxFS{local: WithFaults(f.local, InjectorFunc(check))}
		if f.obj != nil {
			m.obj = f.obj.guarded(refuse)
		}
		return m
	}
	return WithFaults(fsys, InjectorFunc(check))
}

// guarded is a view of o whose changing requests pass refuse first.
func (o *ObjectFS) guarded(refuse func() error) *ObjectFS {
	v := *o
	v.store = guardedStore{Store: o.store, refuse: refuse}
	return &v
}

// errRefused marks a request Guarded did not send, so that do does not
// count it.
var errRefused = errors.New("request not sent")

type refusedError struct{ err error }

func (e refusedError) Error() string   { return e.err.Error() }
func (e refusedError) Unwrap() []error { return []error{e.err, errRefused} }

// guardedStore refuses the requests that change the store; Head, Get and
// the listings pass.
type guardedStore struct {
	Store
	refuse func() error
}

func (s guardedStore) check() error {
	if err := s.refuse(); err != nil {
		return refusedError{err}
	}
	return nil
}

func (s guardedStore) String() string { return fmt.Sprint(s.Store) }

func (s guardedStore) Put(ctx context.Context, bucket, key string, data []byte, ifAbsent bool) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.Put(ctx, bucket, key, data, ifAbsent)
}

func (s guardedStore) Copy(ctx context.Context, bucket, src, dst string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.Copy(ctx, bucket, src, dst)
}

func (s guardedStore) Delete(ctx context.Context, bucket string, keys ...string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.Delete(ctx, bucket, keys...)
}

func (s guardedStore) CreateUpload(ctx context.Context, bucket, key string) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	return s.Store.CreateUpload(ctx, bucket, key)
}

func (s guardedStore) UploadPart(ctx context.Context, bucket, key, id string, number int, data []byte) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	return s.Store.UploadPart(ctx, bucket, key, id, number, data)
}

func (s guardedStore) CopyPart(ctx context.Context, bucket, key, id string, number int, src string, off, n int64) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	return s.Store.CopyPart(ctx, bucket, key, id, number, src, off, n)
}

func (s guardedStore) CompleteUpload(ctx context.Context, bucket, key, id string, parts []Part) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.CompleteUpload(ctx, bucket, key, id, parts)
}

func (s guardedStore) AbortUpload(ctx context.Context, bucket, key, id string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.AbortUpload(ctx, bucket, key, id)
}
