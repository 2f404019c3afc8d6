package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func loadYAML(t *testing.T, yaml string) (*Config, error) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "flinkgo.yaml"), []byte(yaml), 0o600))
	return Load(home, "", nil)
}

func TestS3Keys(t *testing.T) {
	c, err := loadYAML(t, `
state.checkpoints.dir: s3://bucket/chk/
state.savepoints.dir: file:///data/sp
s3:
  endpoint: http://127.0.0.1:7070
  path.style.access: true
  upload.min.part.size: 8MiB
  attempts.maximum: 7
  request-timeout: 30s
security.allowed-paths: /data, s3://bucket/chk
`)
	require.NoError(t, err)
	require.Equal(t, "s3://bucket/chk", c.CheckpointsDir)
	require.Equal(t, "/data/sp", c.SavepointsDir, "a file:// URL is its local path")
	require.Equal(t, S3{Endpoint: "http://127.0.0.1:7070", PathStyle: true, SSL: true, MinPartSize: 8 << 20, MaxConcurrent: 4, MaxAttempts: 7, RequestTimeout: 30 * time.Second}, c.S3)
	require.Equal(t, []string{"/data", "s3://bucket/chk"}, c.AllowedPaths)

	t.Setenv("FLINKGO_S3_PATH_STYLE_ACCESS", "true")
	t.Setenv("FLINKGO_S3_ENDPOINT", "minio.local:9000")
	c, err = loadYAML(t, "")
	require.NoError(t, err)
	require.True(t, c.S3.PathStyle)
	require.Equal(t, "minio.local:9000", c.S3.Endpoint)
}

func TestS3KeysRefused(t *testing.T) {
	for yaml, want := range map[string]string{
		"s3.upload.min.part.size: 1MiB":       "s3.upload.min.part.size: must be between 5MiB and 5GiB",
		"s3.path.style.access: maybe":         "s3.path.style.access: must be true or false",
		"s3.upload.max.concurrent.uploads: 0": "s3.upload.max.concurrent.uploads: must be an integer from 1 to 64",
		"s3.endpoint: http://key:secret@host": "without credentials",
		"s3.access-key: AKIA":                 `unknown configuration key "s3.access-key"`,
		"security.allowed-paths: s3://":       "names no bucket",
	} {
		_, err := loadYAML(t, yaml)
		require.ErrorContains(t, err, want, yaml)
	}
}
