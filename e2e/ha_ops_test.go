package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// Every command works through a daemon that does not own the job: submit
// (placed on the daemon with fewer jobs), info, list, savepoint (the job
// named by its name), stop and cancel are forwarded to the owner; and `daemon drain` moves a daemon's
// jobs to the other one with a savepoint, losing and repeating nothing.
func haOperationsThroughAnyDaemon(t *testing.T) {
	start := time.Now()
	c := newHACluster(t, 2)
	c.start(0)
	c.start(1)
	other := func(i int) int { return 1 - i }

	x := c.daemons[0].mustRun("run", c.daemons[0].writeSpec("x.yaml", fileJob("x", c.out("x"), 1_000_000, 500)))
	ox := c.waitOwned(0, x, -1, 20*time.Second)
	n := other(ox)
	// A second submission goes to the daemon without a job, whichever
	// daemon it is sent to.
	y := c.daemons[ox].mustRun("run", c.daemons[ox].writeSpec("y.yaml", fileJob("y", c.out("y"), 12_000, 1_000)))
	require.Equal(t, n, c.waitOwned(ox, y, -1, 20*time.Second), "placement by count: the second job goes to the other daemon")

	var jobs []api.JobInfo
	require.NoError(t, json.Unmarshal([]byte(c.daemons[n].mustRun("list", "-o", "json")), &jobs))
	owners := map[string]string{}
	for _, j := range jobs {
		owners[j.ID] = j.Owner
	}
	require.Equal(t, map[string]string{x: c.name(ox), y: c.name(n)}, owners, "list on any daemon shows every job and its daemon")

	c.waitCheckpointAfter(n, x, 0, 20*time.Second)
	sp := c.daemons[n].mustRun("savepoint", "x", t.TempDir()) // by its name
	require.DirExists(t, sp, "savepoint through the non-owner, the job named by its name")
	stopped := c.daemons[n].mustRun("stop", x, "--savepoint-path", t.TempDir())
	require.DirExists(t, stopped, "stop through the non-owner")
	waitInfo(t, c, n, x, api.StateFinished, 30*time.Second)

	z := c.daemons[n].mustRun("run", c.daemons[n].writeSpec("z.yaml", fileJob("z", c.out("z"), 1_000_000, 500)))
	oz := c.waitOwned(n, z, -1, 20*time.Second)
	c.daemons[other(oz)].mustRun("cancel", z)
	waitInfo(t, c, oz, z, api.StateCanceled, 30*time.Second)

	// Drain the owner of y: y goes on on the other daemon from the
	// drain's savepoint.
	oy := c.waitOwned(n, y, -1, 5*time.Second)
	c.waitCheckpointAfter(oy, y, 0, 20*time.Second)
	drain := c.daemons[oy].mustRun("daemon", "drain")
	require.Contains(t, drain, y)
	require.Equal(t, other(oy), c.waitOwned(oy, y, oy, 20*time.Second), "the drained job resumed on the other daemon")
	jobs = nil
	require.NoError(t, json.Unmarshal([]byte(c.daemons[oy].mustRun("list", "-o", "json")), &jobs))
	for _, j := range jobs {
		if j.ID == y {
			require.Equal(t, c.name(other(oy)), j.Owner, "the drained daemon lists the job under its new owner: %+v", j)
		}
	}
	info := waitInfo(t, c, oy, y, api.StateFinished, 60*time.Second)
	require.NotEmpty(t, info.RestoredFrom)
	// The drained daemon takes no new job.
	w := c.daemons[oy].mustRun("run", c.daemons[oy].writeSpec("w.yaml", fileJob("w", c.out("w"), 1_000_000, 500)))
	require.Equal(t, other(oy), c.waitOwned(oy, w, -1, 20*time.Second), "a draining daemon takes no new jobs")
	c.daemons[oy].mustRun("cancel", w)

	r := c.verifyOut(n, c.out("y"))
	for i := range c.daemons {
		requireNoPanic(t, "daemon log", c.daemons[i].stderr.String())
	}
	scorecard.Record(t, start, scorecard.Entry{Suite: "HA: submit, savepoint, stop, cancel through a non-owner; drain",
		Faults: "1 drain (stop with savepoint, resumed on the other daemon)", Planned: 1, Fired: 1, Cases: 6,
		Records: r.Records, Lost: r.GapCount + max(0, 12_000-r.Last), Duplicated: r.Duplicates})
	require.Truef(t, r.OK() && r.Records == 12_000 && r.First == 1, "drained job's output: %+v", r)
}
