package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// check validates HA mode and defaults the snapshot directories onto the
// shared storage: every daemon of the cluster must reach every job's
// checkpoints.
func (h *HA) check(c *Config, file string, positions map[string]api.Pos) []api.FieldError {
	if h.Type == "" {
		return nil
	}
	var out []api.FieldError
	missing := func(key, msg string) {
		out = append(out, api.FieldError{File: file, Pos: positions["high-availability.type"], Field: key, Msg: msg})
	}
	if len(h.Endpoints) == 0 {
		missing("high-availability.etcd.endpoints", "high-availability.type is etcd but no etcd endpoints are given (e.g. http://127.0.0.1:2379; `flinkgo dev etcd` starts one)")
	}
	if h.StorageDir == "" || h.StorageDir == "." {
		missing("high-availability.storageDir", "high-availability.type is etcd but no storageDir is given: a directory every daemon of the cluster reaches (checkpoints and savepoints go there)")
	}
	if c.RestAddress == "" {
		missing("rest.address", "high-availability.type is etcd but rest.address is empty: the cluster's daemons forward requests to each other over it")
	}
	if h.StorageDir != "" && h.StorageDir != "." {
		base := vfs.Join(h.StorageDir, h.ClusterID)
		if c.CheckpointsDir == "" {
			c.CheckpointsDir = vfs.Join(base, "checkpoints")
		}
		if c.SavepointsDir == "" {
			c.SavepointsDir = vfs.Join(base, "savepoints")
		}
	}
	return out
}

// bucketName is S3's rule for bucket names (3-63 lower-case letters,
// digits, dots and hyphens, starting and ending with a letter or digit).
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// sharedDir checks high-availability.storageDir: an s3://bucket/prefix URL
// or an absolute local path (a shared POSIX directory), cleaned; "" is
// left to check, which says it is missing. Hadoop's s3a:// and s3n://,
// which Flink users write, are named with what to write instead.
func sharedDir(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch scheme, _, found := strings.Cut(v, "://"); {
	case v == "":
		return "", nil
	case vfs.IsObject(v):
		bucket, _, _ := vfs.SplitObject(v)
		if bucket == "" {
			return "", fmt.Errorf("%q names no bucket: give s3://bucket/prefix", v)
		}
		if !bucketName.MatchString(bucket) {
			return "", fmt.Errorf("%q: %q is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)", v, bucket)
		}
		return vfs.Clean(v), nil
	case found && (scheme == "s3a" || scheme == "s3n" || scheme == "s3p"):
		return "", fmt.Errorf("%q: flinkgo reads s3:// URLs only; write s3://%s", v, strings.TrimPrefix(v, scheme+"://"))
	case found && scheme != "file":
		return "", fmt.Errorf("%q: only s3://bucket/prefix URLs and absolute local paths are supported", v)
	}
	p := vfs.Clean(v)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path (or an s3://bucket/prefix URL)", v)
	}
	return p, nil
}
