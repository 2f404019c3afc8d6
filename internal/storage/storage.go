// Package storage builds the filesystem the daemon and the CLI use for
// state and output: local paths through the given FS, s3:// paths through
// an object store configured by the s3.* keys (docs/object-storage.md).
package storage

import (
	"context"
	"net/http"
	"time"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// Options are what tests add to the configuration.
type Options struct {
	// HTTPClient replaces the S3 client's (fault injection).
	HTTPClient *http.Client
}

// FS returns local for local paths and an ObjectFS on S3 for s3:// paths;
// meter (when not nil) counts every object request. Building makes no
// request.
func FS(c config.S3, local vfs.FS, meter *vfs.Meter, o Options) (vfs.FS, error) {
	st, err := s3store.New(context.Background(), s3store.Options{Endpoint: c.Endpoint, Region: c.Region, PathStyle: c.PathStyle,
		DisableTLS: !c.SSL, MaxAttempts: c.MaxAttempts, HTTPClient: o.HTTPClient})
	if err != nil {
		return nil, err
	}
	obj := vfs.NewObjectFS(st, vfs.ObjectOptions{PartSize: c.MinPartSize, Concurrency: c.MaxConcurrent, RequestTimeout: c.RequestTimeout})
	return vfs.Mux(local, obj.With(meter, time.Time{})), nil
}
