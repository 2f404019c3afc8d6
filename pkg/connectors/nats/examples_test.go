package nats_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/flinkgo/flinkgo/pkg/connectors/print"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// TestExampleJobsCompile keeps configs/jobs/nats-*.yaml valid.
func TestExampleJobsCompile(t *testing.T) {
	files, err := filepath.Glob("../../../configs/jobs/nats-*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = runtime.Compile(filepath.Base(f), src, runtime.Defaults{})
		require.NoError(t, err, f)
	}
}
