package nats_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// testdata/oldsavepoint is a stop-with-savepoint of a NATS bookmark source
// written by flinkgo 259c5dd (before the state encoder: bookmark format 1):
// stream "old", next sequence 3001. This version restores it and replays
// from exactly that sequence.
func TestRestoresBookmarkSavepointOfOlderVersion(t *testing.T) {
	srv := startServer(t, "old:old")
	produceIdx(t, srv.URL(), "old", 1, 3500)
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: old-savepoint-nats
checkpointing: {interval: 1h}
operators:
  - {uid: source, type: nats, url: "%s", stream: old, mode: bookmark, bookmark: epoch, format: json, parallelism: 1}
  - {uid: out, type: test-collect, from: [source], name: %s}
`, srv.URL(), name), runtimetest.Options{Types: testTypes, Restore: "testdata/oldsavepoint", CheckpointsDir: t.TempDir()})
	runtimetest.WaitCollected(t, waitFor, name, 500)
	time.Sleep(100 * time.Millisecond) // nothing beyond the 500 arrives
	runtimetest.Cancel(t, waitFor, j)
	requireExactly(t, idxs(t, runtimetest.Values(name)), 3001, 3500)
	require.Equal(t, api.StateCanceled, j.State())
}
