package nats_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// NATS has no null payload: an empty message is an empty value. Format
// raw emits it (a JSON file sink writes "value":""); format json finds it
// invalid and onDecodeError applies (see docs/values.md).
func TestEmptyPayloads(t *testing.T) {
	srv := startServer(t, "b:b.in")
	c := connect(t, srv.URL())
	for _, p := range []string{"1", "", "2"} {
		_, err := c.js.Publish(context.Background(), "b.in", []byte(p))
		require.NoError(t, err)
	}
	out := t.TempDir()
	j := runtimetest.Start(t, fmt.Sprintf(`
name: raw
checkpointing: {interval: 50ms}
operators:
  - {uid: in, type: nats, url: %s, stream: b, mode: bookmark}
  - {uid: out, type: file, from: [in], path: %s, bucket: none, format: json, rolling: {onCheckpoint: true}}
`, srv.URL(), out), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	var lines []string
	runtimetest.WaitUntil(t, waitFor, "3 lines committed", func() bool {
		lines = committedLines(t, out)
		return len(lines) >= 3
	})
	runtimetest.Cancel(t, waitFor, j)
	require.Len(t, lines, 3)
	for i, want := range []string{`{"value":1,`, `{"value":"",`, `{"value":2,`} {
		require.True(t, strings.HasPrefix(lines[i], want), "line %d: %s", i, lines[i])
	}

	j = runtimetest.Start(t, bookmarkJob(srv.URL(), "checkpointing: {interval: 1h}", "", "type: discard"), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	require.Contains(t, j.Info().Error, `stream b sequence 2: payload is not valid JSON`)
}

// committedLines reads the finished part files under dir, in name order.
func committedLines(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "part-*"))
	require.NoError(t, err)
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out = append(out, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	return out
}
