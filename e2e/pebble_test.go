package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// A keyed count on the pebble state backend (the daemon's default,
// state.backend.type) into exactly-once files, across a kill -9 of the
// daemon: the DB the killed daemon left is not trusted, the job resumes
// from its checkpoint, and every key's counts 1..n are committed exactly
// once. With the daemon's state.backend.incremental too: the resumed job
// opens its DBs from the checkpoint's shared files.
func TestPebbleJobExactAcrossKill9(t *testing.T) {
	parallel(t)
	for _, incremental := range []bool{false, true} {
		t.Run(map[bool]string{false: "full", true: "incremental"}[incremental], func(t *testing.T) {
			pebbleKill9(t, incremental)
		})
	}
}

func pebbleKill9(t *testing.T, incremental bool) {
	const records, keys = 24_000, 100
	e := newEnv(t)
	e.extra = []string{"FLINKGO_STATE_BACKEND_TYPE=pebble"}
	if incremental {
		e.extra = append(e.extra, "FLINKGO_STATE_BACKEND_INCREMENTAL=true")
	}
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	spec := e.writeSpec("j.yaml", `
name: pebble-count
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 1000, delay: 200ms}
operators:
  - {uid: gen, type: datagen, count: 24000, rate: 6000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 100"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: files, type: file, from: [cnt], path: `+out+`, bucket: none, rolling: {onCheckpoint: true}}
`)
	id := e.mustRun("run", spec)
	require.True(t, waitFor(30*time.Second, func() bool {
		info, err := e.jobInfo(id)
		return err == nil && info.Checkpoints != nil && info.Checkpoints.Completed >= 3
	}), "no checkpoints: %s", e.stderr.String())
	db, err := os.ReadDir(filepath.Join(e.home, "pebble", id))
	require.NoError(t, err, "the job's state is under $FLINKGO_HOME/pebble")
	dbs := 0
	for _, d := range db {
		if !strings.HasSuffix(d.Name(), ".chk") { // an incremental checkpoint's hard links
			dbs++
		}
	}
	require.Equal(t, 1, dbs, "%v", db)
	shared, _ := os.ReadDir(filepath.Join(e.home, "checkpoints", id, "shared"))
	require.Equal(t, incremental, len(shared) > 0, "shared files of incremental checkpoints: %v", shared)
	e.killDaemon()

	e.startDaemon()
	info := e.waitSettled(id, 60*time.Second)
	require.Equal(t, api.StateFinished, info.State, info.Error)
	seen := map[string]map[int]int{}
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r struct {
				Key   string
				Count int
			}
			require.NoError(t, json.Unmarshal([]byte(l), &r), l)
			if seen[r.Key] == nil {
				seen[r.Key] = map[int]int{}
			}
			seen[r.Key][r.Count]++
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, seen, keys)
	for k, counts := range seen {
		require.Len(t, counts, records/keys, "key %s: counts lost or invented", k)
		for n, times := range counts {
			require.Equal(t, 1, times, "key %s count %d committed %d times", k, n, times)
			require.True(t, n >= 1 && n <= records/keys, "key %s count %d", k, n)
		}
	}
	_, err = os.Stat(filepath.Join(e.home, "pebble", id))
	require.ErrorIs(t, err, fs.ErrNotExist, "the finished job's DBs are removed, the killed daemon's too")
}
