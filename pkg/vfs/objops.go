package vfs

import (
	"context"
	"io"
)

// The operations below are the object store's own, by object URL, for
// what a disk does with a rename: publish a file only if absent, copy, and
// multipart uploads that stay invisible until completed. Each is one
// counted request of the view.

// PutObject stores data under name in one request (visible whole or not
// at all); with ifAbsent it fails with fs.ErrExist when name exists.
func (o *ObjectFS) PutObject(name string, data []byte, ifAbsent bool) error {
	bucket, key, err := objKey("put", name)
	if err != nil {
		return err
	}
	return o.do(int64(len(data)), func(ctx context.Context) (int64, error) {
		return 0, o.store.Put(ctx, bucket, key, data, ifAbsent)
	})
}

// ReadObject returns the whole content of object name.
func (o *ObjectFS) ReadObject(name string) ([]byte, error) {
	bucket, key, err := objKey("get", name)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = o.do(0, func(ctx context.Context) (int64, error) {
		r, err := o.store.Get(ctx, bucket, key, 0, -1)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		data, err = io.ReadAll(r)
		return int64(len(data)), err
	})
	return data, err
}

// CopyObject copies object src to dst (same bucket).
func (o *ObjectFS) CopyObject(src, dst string) error {
	bucket, skey, err := objKey("copy", src)
	if err != nil {
		return err
	}
	_, dkey, err := objKey("copy", dst)
	if err != nil {
		return err
	}
	return o.do(0, func(ctx context.Context) (int64, error) { return 0, o.store.Copy(ctx, bucket, skey, dkey) })
}

// HeadObject describes object name.
func (o *ObjectFS) HeadObject(name string) (info ObjectInfo, err error) {
	bucket, key, err := objKey("head", name)
	if err != nil {
		return info, err
	}
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		info, err = o.store.Head(ctx, bucket, key)
		return 0, err
	})
	return info, err
}

// ListObjects lists every object below dir (recursively), by key.
func (o *ObjectFS) ListObjects(dir string) (objs []ObjectInfo, err error) {
	bucket, key, err := objKey("list", dir)
	if err != nil {
		return nil, err
	}
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		objs, _, err = o.store.List(ctx, bucket, dirPrefix(key), "")
		return 0, err
	})
	return objs, err
}

// CreateUpload starts a multipart upload of name.
func (o *ObjectFS) CreateUpload(name string) (id string, err error) {
	bucket, key, err := objKey("create-upload", name)
	if err != nil {
		return "", err
	}
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		id, err = o.store.CreateUpload(ctx, bucket, key)
		return 0, err
	})
	return id, err
}

// UploadPart uploads part number of upload id of name.
func (o *ObjectFS) UploadPart(name, id string, number int, data []byte) (etag string, err error) {
	bucket, key, err := objKey("upload-part", name)
	if err != nil {
		return "", err
	}
	err = o.do(int64(len(data)), func(ctx context.Context) (_ int64, err error) {
		etag, err = o.store.UploadPart(ctx, bucket, key, id, number, data)
		return 0, err
	})
	return etag, err
}

// CopyPart makes part number of upload id of name n bytes of object src
// (same bucket) from off.
func (o *ObjectFS) CopyPart(name, id string, number int, src string, off, n int64) (etag string, err error) {
	bucket, key, err := objKey("copy-part", name)
	if err != nil {
		return "", err
	}
	_, skey, err := objKey("copy-part", src)
	if err != nil {
		return "", err
	}
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		etag, err = o.store.CopyPart(ctx, bucket, key, id, number, skey, off, n)
		return 0, err
	})
	return etag, err
}

// CompleteUpload completes upload id of name with parts.
func (o *ObjectFS) CompleteUpload(name, id string, parts []Part) error {
	bucket, key, err := objKey("complete-upload", name)
	if err != nil {
		return err
	}
	return o.do(0, func(ctx context.Context) (int64, error) {
		return 0, o.store.CompleteUpload(ctx, bucket, key, id, parts)
	})
}

// AbortUpload aborts upload id of name.
func (o *ObjectFS) AbortUpload(name, id string) error {
	bucket, key, err := objKey("abort-upload", name)
	if err != nil {
		return err
	}
	return o.do(0, func(ctx context.Context) (int64, error) { return 0, o.store.AbortUpload(ctx, bucket, key, id) })
}

// ListUploads lists the uploads in progress below dir, as object URLs and ids.
func (o *ObjectFS) ListUploads(dir string) (ups []Upload, err error) {
	bucket, key, err := objKey("list-uploads", dir)
	if err != nil {
		return nil, err
	}
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		ups, err = o.store.ListUploads(ctx, bucket, dirPrefix(key))
		return 0, err
	})
	for i := range ups {
		ups[i].Key = ObjectURL(bucket, ups[i].Key)
	}
	return ups, err
}

// ListParts lists the parts of upload id of name.
func (o *ObjectFS) ListParts(name, id string) (parts []Part, err error) {
	bucket, key, err := objKey("list-parts", name)
	if err != nil {
		return nil, err
	}
	err = o.do(0, func(ctx context.Context) (_ int64, err error) {
		parts, err = o.store.ListParts(ctx, bucket, key, id)
		return 0, err
	})
	return parts, err
}
