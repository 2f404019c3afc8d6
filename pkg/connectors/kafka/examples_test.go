package kafka_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExampleJobsCompile keeps configs/jobs/kafka-to-kafka.yaml valid.
func TestExampleJobsCompile(t *testing.T) {
	files, err := filepath.Glob("../../../configs/jobs/kafka-to-kafka*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = compileSpec(string(src))
		require.NoError(t, err, f)
	}
}
