package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// S3 configures the object store behind s3:// paths (state.checkpoints.dir,
// state.savepoints.dir, savepoint targets, -s paths, file sink paths). The
// keys are Flink's S3 filesystem options where Flink has them. Credentials
// are never configured here: they come from the standard AWS chain
// (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared
// config and credentials files, web identity, instance metadata).
type S3 struct {
	Endpoint       string // "" for AWS
	Region         string
	PathStyle      bool
	SSL            bool // for an endpoint given without scheme
	MinPartSize    int64
	MaxConcurrent  int
	MaxAttempts    int
	RequestTimeout time.Duration
}

// DefaultS3 are the defaults of the s3.* keys.
var DefaultS3 = S3{SSL: true, MinPartSize: 5 << 20, MaxConcurrent: 4, MaxAttempts: 5, RequestTimeout: time.Minute}

var s3Keys = []key{
	{"s3.endpoint", "", "URL of an S3-compatible server (http://127.0.0.1:7070); empty: AWS", func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		if strings.ContainsAny(v, " @") {
			return fmt.Errorf("must be a URL such as http://127.0.0.1:7070 or a host:port, without credentials, got %q", v)
		}
		c.S3.Endpoint = v
		return nil
	}},
	{"s3.region", "", "the bucket's region; empty: the AWS chain's (AWS_REGION, the profile), else us-east-1", func(c *Config, v string) error { c.S3.Region = strings.TrimSpace(v); return nil }},
	{"s3.path.style.access", "false", "address buckets in the path (http://host/bucket/key), as most S3-compatible servers need, not in the host name", boolKey(func(c *Config) *bool { return &c.S3.PathStyle })},
	{"s3.path-style-access", "false", "the same as s3.path.style.access", boolKey(func(c *Config) *bool { return &c.S3.PathStyle })},
	{"s3.ssl.enabled", "true", "use TLS (https) for an s3.endpoint given without scheme; a CA bundle for a private CA comes from AWS_CA_BUNDLE", boolKey(func(c *Config) *bool { return &c.S3.SSL })},
	{"s3.upload.min.part.size", "5MiB", "part size of the file sink's multipart uploads and of large state files (at least 5MiB, S3's minimum)", func(c *Config, v string) error {
		b, err := api.ParseByteSize(v)
		if err != nil {
			return err
		}
		if b < 5<<20 || b > 5<<30 {
			return fmt.Errorf("must be between 5MiB and 5GiB (S3's part limits), got %s", b)
		}
		c.S3.MinPartSize = int64(b)
		return nil
	}},
	{"s3.upload.max.concurrent.uploads", "4", "parts one file uploads at once", intRange(1, 64, func(c *Config) *int { return &c.S3.MaxConcurrent })},
	{"s3.attempts.maximum", "5", "attempts of one request: throttling, 5xx answers and broken connections are retried with exponential backoff, within the checkpoint timeout",
		intRange(1, 100, func(c *Config) *int { return &c.S3.MaxAttempts })},
	{"s3.request-timeout", "1min", "bounds one request with its retries (a checkpoint's also end at its timeout)", func(c *Config, v string) error {
		d, err := api.ParseDuration(v)
		if err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("must be positive, got %s", d)
		}
		c.S3.RequestTimeout = d.D()
		return nil
	}},
}

func intRange(lo, hi int, field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("must be an integer from %d to %d, got %q", lo, hi, v)
		}
		*field(c) = n
		return nil
	}
}

func boolKey(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("must be true or false, got %q", v)
		}
		*field(c) = b
		return nil
	}
}

// storagePath normalises a state directory: an s3:// URL keeps its
// scheme, a file:// URL becomes its local path, others are as given.
func storagePath(v string) string {
	if v == "" || (!vfs.IsObject(v) && !strings.HasPrefix(v, "file://")) {
		return v
	}
	return vfs.Clean(v)
}

// s3CredentialHint explains, for Flink's credential keys, where flinkgo
// takes credentials from instead ("" for other keys).
func s3CredentialHint(key string) string {
	switch key {
	case "s3.access-key", "s3.secret-key", "s3.access.key", "s3.secret.key", "fs.s3a.access.key", "fs.s3a.secret.key":
		return ": flinkgo never reads credentials from its config; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with ~/.aws/credentials, in the daemon's environment (the standard AWS chain)"
	}
	return ""
}
