package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestHAConfig(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "flinkgo.yaml")
	write := func(s string) {
		require.NoError(t, os.WriteFile(file, []byte(s), 0o600))
	}

	write("high-availability:\n  type: etcd\n  etcd: {endpoints: \"http://a:2379, http://b:2379\", lease-ttl: 3s}\n  storageDir: /shared\n  cluster-id: prod\n")
	c, err := Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, HA{Type: "etcd", Endpoints: []string{"http://a:2379", "http://b:2379"}, StorageDir: "/shared", ClusterID: "prod", LeaseTTL: 3 * time.Second}, c.HA)
	require.Equal(t, "/shared/prod/checkpoints", c.CheckpointsDir, "snapshots default onto the shared storage")
	require.Equal(t, "/shared/prod/savepoints", c.SavepointsDir)

	write("high-availability.type: etcd\nrest.address: \"\"\n")
	_, err = Load(home, "", nil)
	require.Equal(t, api.CodeInvalid, api.CodeOf(err))
	for _, want := range []string{
		file + ":1:25: high-availability.etcd.endpoints: high-availability.type is etcd but no etcd endpoints are given",
		"high-availability.storageDir: high-availability.type is etcd but no storageDir is given",
		"rest.address: high-availability.type is etcd but rest.address is empty",
	} {
		require.ErrorContains(t, err, want)
	}

	write("high-availability: {type: zookeeper, storageDir: rel, etcd: {lease-ttl: 1500ms}, cluster-id: a/b}\n")
	_, err = Load(home, "", nil)
	for _, want := range []string{
		`high-availability.type: must be NONE or etcd, got "zookeeper"`,
		`high-availability.storageDir: "rel" is not an absolute path`,
		"high-availability.etcd.lease-ttl: must be whole seconds and at least 2s",
		`high-availability.cluster-id: must be a non-empty name without '/'`,
	} {
		require.ErrorContains(t, err, want)
	}

	write("high-availability:\n  type: etcd\n  etcd: {endpoints: \"http://a:2379\"}\n  storageDir: s3://ha-bucket/flinkgo/\n  cluster-id: prod\n")
	c, err = Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, "s3://ha-bucket/flinkgo", c.HA.StorageDir)
	require.Equal(t, "s3://ha-bucket/flinkgo/prod/checkpoints", c.CheckpointsDir, "snapshots default into the bucket")
	require.Equal(t, "s3://ha-bucket/flinkgo/prod/savepoints", c.SavepointsDir)

	for v, want := range map[string]string{
		"s3://":             `"s3://" names no bucket: give s3://bucket/prefix`,
		"s3://ab/x":         `"ab" is not an S3 bucket name`,
		"s3://My_Bucket/x":  `"My_Bucket" is not an S3 bucket name`,
		"s3a://ha-bucket/x": `flinkgo reads s3:// URLs only; write s3://ha-bucket/x`,
		"gs://ha-bucket/x":  `only s3://bucket/prefix URLs and absolute local paths are supported`,
		"shared/relative":   `is not an absolute path (or an s3://bucket/prefix URL)`,
	} {
		write("high-availability:\n  type: etcd\n  etcd: {endpoints: \"http://a:2379\"}\n  storageDir: \"" + v + "\"\n")
		_, err = Load(home, "", nil)
		require.Equal(t, api.CodeInvalid, api.CodeOf(err), v)
		require.ErrorContains(t, err, file+":4:15: high-availability.storageDir: ", v)
		require.ErrorContains(t, err, want, v)
	}
}

// A list-valued key takes a YAML list, one string or a comma-separated
// string, as the spec's list-valued keys do (api.SplitList).
func TestListKeysTakeAListOrAString(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "flinkgo.yaml")
	for _, endpoints := range []string{`[http://a:2379, http://b:2379]`, `"http://a:2379,http://b:2379"`, "\n      - http://a:2379\n      - http://b:2379"} {
		require.NoError(t, os.WriteFile(file, []byte("high-availability:\n  type: etcd\n  etcd:\n    endpoints: "+endpoints+"\n  storageDir: /shared\nrest:\n  allowed-hosts: [a.example, b.example]\n"), 0o600))
		c, err := Load(home, "", nil)
		require.NoError(t, err, endpoints)
		require.Equal(t, []string{"http://a:2379", "http://b:2379"}, c.HA.Endpoints, endpoints)
		require.Equal(t, []string{"a.example", "b.example"}, c.AllowedHosts, endpoints)
	}
	require.NoError(t, os.WriteFile(file, []byte("high-availability:\n  etcd:\n    endpoints: http://a:2379\n"), 0o600))
	c, err := Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"http://a:2379"}, c.HA.Endpoints)
}
