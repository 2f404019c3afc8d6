package vfs

import (
	"context"
	"errors"
	"io"
	"time"
)

// Store is an object store (S3 and what speaks its protocol): buckets of
// objects named by keys, each written whole — visible complete or not at
// all, never renamed, never appended to. It is what ObjectFS builds an FS
// on, and what the checkpoint storage and the file sink use directly for
// what a rename does on a disk (see docs/object-storage.md).
//
// Every method blocks until the store answered (retries, if any, are the
// implementation's, bounded by ctx). Errors: fs.ErrNotExist for a missing
// object or bucket, fs.ErrExist when Put with ifAbsent finds the key
// taken, ErrNoUpload for an upload id the store does not know (completed,
// aborted or never created); anything else is the store failing, and the
// caller fails what it was doing (a checkpoint, a commit). Implementations
// are safe for concurrent use.
type Store interface {
	// Head describes an object.
	Head(ctx context.Context, bucket, key string) (ObjectInfo, error)
	// Get reads n bytes of an object from off (n < 0: to its end).
	Get(ctx context.Context, bucket, key string, off, n int64) (io.ReadCloser, error)
	// Put stores data as key. With ifAbsent it fails with fs.ErrExist when
	// the key exists (S3's If-None-Match: *), so of two writers one wins.
	Put(ctx context.Context, bucket, key string, data []byte, ifAbsent bool) error
	// Copy copies object src to dst in the same bucket.
	Copy(ctx context.Context, bucket, src, dst string) error
	// Delete deletes keys; a missing key is not an error.
	Delete(ctx context.Context, bucket string, keys ...string) error
	// List returns the objects whose key starts with prefix, sorted by key;
	// with a delimiter, keys that have it after the prefix are rolled up
	// into prefixes (ending with the delimiter) instead, as S3 does.
	List(ctx context.Context, bucket, prefix, delimiter string) (objects []ObjectInfo, prefixes []string, err error)

	// CreateUpload starts a multipart upload of key: nothing is visible
	// under key until CompleteUpload.
	CreateUpload(ctx context.Context, bucket, key string) (id string, err error)
	// UploadPart uploads part number (1-based) of an upload; uploading a
	// number again replaces that part. Every part but the last one an
	// upload is completed with must hold at least MinPartSize bytes.
	UploadPart(ctx context.Context, bucket, key, id string, number int, data []byte) (etag string, err error)
	// CopyPart makes part number of an upload n bytes of object src from off.
	CopyPart(ctx context.Context, bucket, key, id string, number int, src string, off, n int64) (etag string, err error)
	// CompleteUpload makes key the concatenation of parts (each as
	// uploaded, in the order given) in one step and ends the upload.
	CompleteUpload(ctx context.Context, bucket, key, id string, parts []Part) error
	// AbortUpload ends an upload and drops its parts.
	AbortUpload(ctx context.Context, bucket, key, id string) error
	// ListUploads lists the uploads in progress of keys starting with prefix.
	ListUploads(ctx context.Context, bucket, prefix string) ([]Upload, error)
	// ListParts lists the parts an upload holds, by number.
	ListParts(ctx context.Context, bucket, key, id string) ([]Part, error)
}

// MinPartSize is the smallest part S3 accepts in a multipart upload but
// for the last one.
const MinPartSize = 5 << 20

// ErrNoUpload means a multipart upload id is unknown to the store.
var ErrNoUpload = errors.New("no such multipart upload")

// ObjectInfo describes an object.
type ObjectInfo struct {
	Key     string
	Size    int64
	ETag    string
	ModTime time.Time
}

// Part is one uploaded part of a multipart upload.
type Part struct {
	Number int
	ETag   string
	Size   int64
}

// Upload is a multipart upload in progress.
type Upload struct {
	Key, ID   string
	Initiated time.Time
}
