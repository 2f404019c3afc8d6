package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

func TestOverlap(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"/out", "/out", "is"},
		{"/out/x", "/out", "is inside"},
		{"/out", "/out/x/y", "contains"},
		{"/out", "/output", ""},
		{"/output", "/out", ""},
		{"/", "/out", "contains"},
		{"/a/b", "/a/c", ""},
	} {
		require.Equal(t, c.want, overlap(c.a, c.b), "%s vs %s", c.a, c.b)
	}
}

// Every example job compiles, and each writes its own directory, so a user
// can run them side by side (two used to share /tmp/flinkgo-nats-out).
func TestExampleJobsOwnTheirOutputs(t *testing.T) {
	files, err := filepath.Glob("../../configs/jobs/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	owner := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.yaml") {
			continue // a job's tests (flinkgo test), not a job
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		g, err := engine.Compile(all.Registry(), f, src, engine.Defaults{})
		require.NoError(t, err)
		for _, o := range graphOutputs(g) {
			for path, other := range owner {
				require.Empty(t, overlap(o.path, path), "%s writes %s, which overlaps %s of %s", f, o.path, path, other)
			}
			owner[o.path] = f
		}
	}
	require.GreaterOrEqual(t, len(owner), 3, "the file-sink examples: %v", owner)
}
