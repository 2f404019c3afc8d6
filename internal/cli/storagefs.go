package cli

import (
	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/storage"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// storageFS is the filesystem of the commands that read or delete
// snapshots themselves (savepoint inspect, dispose): local paths as they
// are, s3:// paths through the s3.* keys of the daemon's config (the same
// file and FLINKGO_S3_* variables the daemon reads) and the AWS chain's
// credentials. Without s3:// in path no config is read.
func (g *globals) storageFS(path string) (vfs.FS, error) {
	if !vfs.IsObject(path) {
		return vfs.Default, nil
	}
	cfg, err := config.Load(g.home(), g.config, nil)
	if err != nil {
		return nil, err
	}
	return storage.FS(cfg.S3, vfs.Default, nil, storage.Options{})
}
