package vfs

import (
	"path"
	"path/filepath"
	"strings"
)

// Paths given to an FS are local paths as the operating system writes them
// ("/data/out"), file URLs naming one ("file:///data/out"), or object URLs
// ("s3://bucket/prefix/name"), which an FS built with Mux hands to its
// object store. The helpers below treat each the way it needs: a local
// path exactly as path/filepath does, an object URL with "/" separators and
// its scheme kept (filepath.Clean would turn "s3://b" into "s3:/b"; such a
// path is still understood as the object URL it came from).

// ObjectScheme is the scheme of object URLs.
const ObjectScheme = "s3://"

const fileScheme = "file://"

// IsObject reports whether p names an object in an object store (an s3://
// URL, or one that filepath.Clean collapsed to "s3:/").
func IsObject(p string) bool { return strings.HasPrefix(p, "s3:/") }

// SplitObject returns the bucket and key of an object URL ("s3://b/k/x":
// "b", "k/x"); the key is "" for the bucket itself. ok is false for a path
// that is not an object URL.
func SplitObject(p string) (bucket, key string, ok bool) {
	rest, ok := strings.CutPrefix(p, "s3:/")
	if !ok {
		return "", "", false
	}
	rest = strings.Trim(path.Clean("/"+strings.TrimLeft(rest, "/")), "/")
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, key, true
}

// ObjectURL builds the URL of key in bucket.
func ObjectURL(bucket, key string) string {
	if key == "" {
		return ObjectScheme + bucket
	}
	return ObjectScheme + bucket + "/" + key
}

// Clean returns the shortest form of p: filepath.Clean for a local path,
// the local path of a file URL, and an object URL with one "s3://" and no
// empty, "." or ".." parts.
func Clean(p string) string {
	if bucket, key, ok := SplitObject(p); ok {
		return ObjectURL(bucket, key)
	}
	if rest, ok := strings.CutPrefix(p, fileScheme); ok {
		return filepath.Clean(rest)
	}
	return filepath.Clean(p)
}

// Join joins elem like filepath.Join; when the first element is an object
// URL the result is one too.
func Join(elem ...string) string {
	if len(elem) > 0 && IsObject(elem[0]) {
		bucket, key, _ := SplitObject(elem[0])
		return ObjectURL(bucket, strings.Trim(path.Join(append([]string{"/", key}, elem[1:]...)...), "/"))
	}
	if len(elem) > 0 {
		if rest, ok := strings.CutPrefix(elem[0], fileScheme); ok {
			elem = append([]string{rest}, elem[1:]...)
		}
	}
	return filepath.Join(elem...)
}

// Dir is filepath.Dir, or the parent of an object URL (a bucket is its
// own parent).
func Dir(p string) string {
	if bucket, key, ok := SplitObject(p); ok {
		if i := strings.LastIndex(key, "/"); i >= 0 {
			return ObjectURL(bucket, key[:i])
		}
		return ObjectURL(bucket, "")
	}
	return filepath.Dir(Clean(p))
}

// Base is filepath.Base, or the last element of an object URL's key.
func Base(p string) string {
	if bucket, key, ok := SplitObject(p); ok {
		if key == "" {
			return bucket
		}
		return key[strings.LastIndex(key, "/")+1:]
	}
	return filepath.Base(Clean(p))
}

// IsAbs reports whether p is an absolute local path, a file URL of one, or
// an object URL with a bucket.
func IsAbs(p string) bool {
	if bucket, _, ok := SplitObject(p); ok {
		return bucket != ""
	}
	if rest, ok := strings.CutPrefix(p, fileScheme); ok {
		return filepath.IsAbs(rest)
	}
	return filepath.IsAbs(p)
}

// Within reports whether p is dir or lies below it (both cleaned).
func Within(p, dir string) bool {
	p, dir = Clean(p), Clean(dir)
	sep := string(filepath.Separator)
	if IsObject(dir) {
		sep = "/"
	}
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, sep)+sep)
}
