package e2e

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Commands take a job's name wherever they take an id: a unique name, or
// the one job of that name that has not ended; two running jobs of one
// name are an error listing both. logs -n above the cap says so, and a
// drained stop explains why it prints no restore command.
func TestJobsAddressedByName(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	first := e.mustRun("run", e.writeSpec("a.yaml", ownedSpec("user-windows", filepath.Join(e.home, "a"))))
	require.Equal(t, first, e.info("user-windows").ID)
	e.mustRun("cancel", "user-windows")

	second := e.mustRun("run", e.writeSpec("b.yaml", ownedSpec("user-windows", filepath.Join(e.home, "b"))))
	require.Equal(t, second, e.info("user-windows").ID, "the run that has not ended, not the canceled one")
	third := e.mustRun("run", e.writeSpec("c.yaml", ownedSpec("user-windows", filepath.Join(e.home, "c"))))
	res := e.run("info", "user-windows")
	require.Equal(t, 4, res.code, res.stderr)
	require.Contains(t, res.stderr, `job "user-windows" is ambiguous`)
	require.Contains(t, res.stderr, second)
	require.Contains(t, res.stderr, third)
	e.mustRun("cancel", third)

	res = e.run("logs", "-n", "5000", "user-windows")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "-n 5000: showing the last 1000 lines")

	e.waitCheckpoint(second)
	res = e.run("stop", "--drain", "user-windows")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stderr, "restore with")
	require.Contains(t, res.stderr, "no restore command: the job was drained (--drain)")
	require.Equal(t, api.StateFinished, e.info(second).State)
}
