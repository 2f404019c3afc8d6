package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

const boundedSpec = `
name: bounded
parallelism: 2
operators:
  - {uid: gen, type: datagen, count: 50000}
  - {uid: evens, type: filter, from: [gen], expr: "idx % 2 == 0"}
  - {uid: sink, type: discard, from: [evens]}
`

const unboundedSpec = `
name: forever
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: out, type: print, from: [gen]}
`

func TestBoundedJobFinishesWithCounts(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	id := e.mustRun("run", e.writeSpec("bounded.yaml", boundedSpec))
	require.Len(t, id, 32)
	info := e.waitState(id, api.StateFinished, 30*time.Second)
	require.Len(t, info.Operators, 3)
	byUID := map[string]api.OperatorInfo{}
	for _, op := range info.Operators {
		byUID[op.UID] = op
	}
	require.Equal(t, int64(50000), byUID["gen"].RecordsOut)
	require.Equal(t, int64(50000), byUID["evens"].RecordsIn)
	require.Equal(t, int64(25000), byUID["evens"].RecordsOut)
	require.Equal(t, int64(25000), byUID["sink"].RecordsIn)
	require.Equal(t, 2, byUID["gen"].Parallelism)
	// A unique prefix names the job too.
	require.Equal(t, id, e.info(id[:8]).ID)
}

func TestUnboundedJobCanceled(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	out := e.mustRun("run", e.writeSpec("forever.yaml", unboundedSpec), "-o", "json")
	require.Contains(t, out, `"state": "RUNNING"`)
	id := e.mustRun("list", "-o", "json")
	require.Contains(t, id, "RUNNING")
	jobs := e.mustRun("list")
	fields := strings.Fields(strings.Split(jobs, "\n")[1])
	jobID := fields[0]
	require.Eventually(t, func() bool { return strings.Contains(e.stdout.String(), `{"idx": 1}`) }, 20*time.Second, 20*time.Millisecond,
		"the print sink wrote nothing")
	r := e.run("cancel", jobID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "CANCELED", strings.TrimSpace(r.stdout))
	require.Contains(t, r.stderr, "flinkgo stop")
	e.waitState(jobID, api.StateCanceled, 5*time.Second)
	// print sink lines reach the daemon's stdout and the job's .out file.
	require.Contains(t, e.stdout.String(), `{"idx": 1}`)
	data, err := os.ReadFile(filepath.Join(e.home, "jobs", jobID, "job.out"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), `{"idx": 1}`+"\n"))
	// Canceling again is a state conflict (exit 7).
	require.Equal(t, 7, e.run("cancel", jobID).code)
	require.Equal(t, 4, e.run("info", "ffffffff").code)
}

func TestValidateExitCodes(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	bad := e.writeSpec("bad.yaml", `
name: bad
paralelism: 2
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: print, from: [nope]}
`)
	r := e.run("validate", bad)
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, `bad.yaml:3:1: paralelism: unknown field "paralelism"; did you mean "parallelism"?`)
	require.Contains(t, r.stderr, `operators[1].from[0]: no operator has uid "nope"`)
	good := e.writeSpec("good.yaml", boundedSpec)
	r = e.run("validate", good)
	require.Equal(t, 0, r.code, r.stderr)
	// run validates before submitting: exit 3 even without a daemon.
	require.Equal(t, 3, e.run("run", bad).code)
}

func TestNoDaemon(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	r := e.run("list")
	require.Equal(t, 5, r.code)
	require.Contains(t, r.stderr, "start one with `flinkgo daemon`")
}

func TestDaemonSecurity(t *testing.T) {
	e := newEnv(t)
	e.startDaemon()
	fi, err := os.Stat(filepath.Join(e.home, "flinkgo.sock"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	fi, err = os.Stat(e.home)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(e.home, "token"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	base := "http://" + e.restAddress()
	resp, err := http.Post(base+"/v1/jobs", "application/json", strings.NewReader(`{"spec": "x"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/jobs", strings.NewReader(`{"spec": "x"}`))
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	// Reads need no token; metrics are served.
	resp, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// The CLI over TCP reads the token from the home.
	r := e.run("--address", base, "run", e.writeSpec("b.yaml", boundedSpec))
	require.Equal(t, 0, r.code, r.stderr)

	// A second daemon on the same home refuses to start.
	r = e.run("daemon", "--rest-address", "")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "already running")

	code, took := e.stopDaemon()
	require.Equal(t, 0, code)
	require.Less(t, took, 5*time.Second)
}
