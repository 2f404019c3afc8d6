package nats_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/stretchr/testify/require"
)

// TestExampleJobsCompile keeps configs/jobs/nats-*.yaml valid.
func TestExampleJobsCompile(t *testing.T) {
	files, err := filepath.Glob("../../../configs/jobs/nats-*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = engine.Compile(testRegistry, filepath.Base(f), src, engine.Defaults{})
		require.NoError(t, err, f)
	}
}
