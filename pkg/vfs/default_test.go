package vfs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// An object URL never becomes a local directory named "s3:".
func TestDefaultRefusesObjectURLs(t *testing.T) {
	_, err := vfs.Default.Create("s3://bucket/x")
	require.ErrorContains(t, err, "no object store configured")
	require.ErrorContains(t, vfs.Default.MkdirAll("s3:/bucket/x", 0o755), "no object store configured")
	_, ok := vfs.Objects(vfs.Default, "s3://bucket/x")
	require.False(t, ok)
}
