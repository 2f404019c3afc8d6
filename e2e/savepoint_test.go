package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

const statefulSpec = `
name: stateful
checkpointing: {interval: 100ms}
operators:
  - {uid: gen, type: datagen, rate: 2000}
  - {uid: key, type: keyBy, from: [gen], expr: "idx % 7"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: discard, from: [cnt]}
`

func TestSavepointLifecycle(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	spec := e.writeSpec("stateful.yaml", statefulSpec)
	id := e.mustRun("run", spec)
	e.waitCheckpoint(id) // keyed state to restore

	// No target and no state.savepoints.dir: $FLINKGO_HOME/savepoints,
	// where the shutdown savepoints go too; stderr says how to restore,
	// with the job's own spec file.
	r := e.run("savepoint", id)
	require.Equal(t, 0, r.code, r.stderr)
	byDefault := strings.TrimSpace(r.stdout)
	require.True(t, strings.HasPrefix(byDefault, filepath.Join(e.home, "savepoints", "savepoint-"+id[:6]+"-")), byDefault)
	require.FileExists(t, filepath.Join(byDefault, "_metadata"))
	require.Contains(t, r.stderr, "restore with: flinkgo run -s "+byDefault+" "+spec+"\n")

	target := filepath.Join(e.home, "sp")
	r = e.run("savepoint", id, target)
	require.Equal(t, 0, r.code, r.stderr)
	path := strings.TrimSpace(r.stdout)
	require.True(t, strings.HasPrefix(path, target+"/savepoint-"+id[:6]+"-"), path)
	require.FileExists(t, filepath.Join(path, "_metadata"))
	require.Equal(t, api.StateRunning, e.info(id).State, "the job keeps running")

	// inspect, human and JSON.
	out := e.mustRun("savepoint", "inspect", path)
	require.Contains(t, out, `savepoint`)
	require.Contains(t, out, "cnt")
	require.Contains(t, out, "nextIndexBySplit")
	var ins struct {
		Kind      string `json:"kind"`
		Operators []struct {
			UID         string `json:"uid"`
			Parallelism int    `json:"parallelism"`
		} `json:"operators"`
	}
	require.NoError(t, json.Unmarshal([]byte(e.mustRun("savepoint", "inspect", path, "-o", "json")), &ins))
	require.Equal(t, "savepoint", ins.Kind)
	require.Len(t, ins.Operators, 4)

	// stop: atomic savepoint + FINISHED.
	stopDir := filepath.Join(e.home, "stops")
	stopped := e.mustRun("stop", id, "--savepoint-path", stopDir)
	require.True(t, strings.HasPrefix(stopped, stopDir), stopped)
	require.Equal(t, api.StateFinished, e.info(id).State)

	// dry-run plans; a job without the keyed operators cannot restore.
	out = e.mustRun("run", "--dry-run", "-s", stopped, spec)
	require.Contains(t, out, "matched  cnt")
	without := e.writeSpec("without.yaml", `
name: stateful
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: discard, from: [gen]}
`)
	r = e.run("run", "--dry-run", "-s", stopped, without)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stdout, "UNMATCHED cnt")
	require.Contains(t, r.stderr, "--allow-non-restored-state")
	r = e.run("run", "-s", stopped, without)
	require.Equal(t, 3, r.code, "refused without -n")
	id2 := e.mustRun("run", "-n", "-s", stopped, without)
	require.Equal(t, stopped, e.info(id2).RestoredFrom)
	e.mustRun("cancel", id2)

	// restore the full job from the stop savepoint.
	id3 := e.mustRun("run", "-s", filepath.Join(stopped, "_metadata"), spec)
	info := e.info(id3)
	require.Equal(t, api.StateRunning, info.State)
	require.Equal(t, stopped, info.RestoredFrom)
	r = e.run("cancel", id3)
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stderr, "warning:")

	// a corrupt savepoint is refused and starts nothing.
	corrupt := filepath.Join(e.home, "corrupt")
	require.NoError(t, os.CopyFS(corrupt, os.DirFS(stopped)))
	data, err := os.ReadFile(filepath.Join(corrupt, "_metadata"))
	require.NoError(t, err)
	data[len(data)/2] ^= 0xff
	require.NoError(t, os.WriteFile(filepath.Join(corrupt, "_metadata"), data, 0o600))
	before := e.mustRun("list", "-a", "-o", "json")
	r = e.run("run", "-s", corrupt, spec)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "checksum")
	require.Equal(t, before, e.mustRun("list", "-a", "-o", "json"), "nothing started")

	// dispose: refuses what is not a savepoint, deletes a savepoint.
	r = e.run("savepoint", "dispose", e.home)
	require.NotEqual(t, 0, r.code)
	e.mustRun("savepoint", "-d", path)
	require.NoDirExists(t, path)
}
