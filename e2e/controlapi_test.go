package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// apiEnv is a daemon whose config bounds savepoint paths to allowed/, with
// a running job to aim state-changing requests at.
type apiEnv struct {
	*env
	allowed, outside string
	id               string
	spec             string // a valid job spec
	checks, refused  int
}

func newAPIEnv(t *testing.T) *apiEnv {
	e := newEnv(t)
	a := &apiEnv{env: e, allowed: filepath.Join(e.home, "allowed"), outside: filepath.Join(e.home, "outside")}
	require.NoError(t, os.MkdirAll(a.allowed, 0o700))
	require.NoError(t, os.MkdirAll(a.outside, 0o700))
	conf := filepath.Join(t.TempDir(), "daemon.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("security.allowed-paths: "+a.allowed+"\n"), 0o600))
	e.startDaemon("--config", conf)
	a.spec = statefulSpec
	a.id = e.mustRun("run", e.writeSpec("stateful.yaml", a.spec))
	return a
}

// expect counts one refusal check: got must be want, and the message must
// name the cause. It fails the test without stopping it, so the scorecard
// gets every result.
func (a *apiEnv) expect(got, want int, body, cause, what string) {
	a.t.Helper()
	a.checks++
	if got == want && strings.Contains(body, cause) {
		a.refused++
		return
	}
	a.t.Errorf("%s: got %d, want %d with %q in: %s", what, got, want, cause, body)
}

// unchanged asserts that no job was created, the job still runs, and
// nothing was written where savepoints could go.
func (a *apiEnv) unchanged(jobs string, trees map[string]map[string]string) {
	a.t.Helper()
	require.Equal(a.t, jobs, a.jobIDs(), "the job list changed")
	require.Equal(a.t, api.StateRunning, a.info(a.id).State)
	for dir, before := range trees {
		require.Equal(a.t, before, treeSnapshot(a.t, dir), "%s changed", dir)
	}
	code, body := a.sockRequest(http.MethodGet, "/v1/health", nil)
	require.Equal(a.t, http.StatusOK, code, body)
}

func (a *apiEnv) trees() map[string]map[string]string {
	return map[string]map[string]string{a.allowed: treeSnapshot(a.t, a.allowed), a.outside: treeSnapshot(a.t, a.outside)}
}

// jobIDs lists every job the daemon knows, with its state.
func (a *apiEnv) jobIDs() string {
	a.t.Helper()
	var list []api.JobInfo
	require.NoError(a.t, json.Unmarshal([]byte(a.mustRun("list", "-a", "-o", "json")), &list))
	var out []string
	for _, j := range list {
		out = append(out, j.ID+" "+string(j.State))
	}
	return strings.Join(out, "\n")
}

func jsonBody(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// checkTokens sends every state-changing request over TCP without the
// right token: all must be 401.
func (a *apiEnv) checkTokens(writes []apiRequest) {
	token := a.token()
	for _, w := range writes {
		for _, bad := range []string{"", "wrong", token + "0", token[:len(token)-1], "Basic " + token, "bearer "} {
			req := newRequest(a.t, w.method, "http://"+a.restAddress()+w.path, w.body)
			switch {
			case bad == "":
			case strings.HasPrefix(bad, "Basic ") || bad == "bearer ":
				req.Header.Set("Authorization", bad)
			default:
				req.Header.Set("Authorization", "Bearer "+bad)
			}
			code, body := doRequest(a.t, http.DefaultClient, req)
			a.expect(code, http.StatusUnauthorized, body, "bearer token", fmt.Sprintf("TCP %s %s with %q", w.method, w.path, bad))
		}
	}
}

// checkReads: reads need no token.
func (a *apiEnv) checkReads() {
	jobPath := "/v1/jobs/" + a.id
	for _, p := range []string{"/v1/jobs", "/v1/jobs?all=true", jobPath, jobPath + "/checkpoints", "/v1/health", "/metrics"} {
		code, body := a.tcpRequest(http.MethodGet, p, "", nil)
		require.Equal(a.t, http.StatusOK, code, "GET %s: %s", p, body)
	}
	code, body := a.tcpRequest(http.MethodGet, "/v1/jobs/ffffffff", "", nil)
	require.Equal(a.t, http.StatusNotFound, code, body)
}

// checkBodyLimits sends bodies over MaxBodyBytes to every endpoint that
// reads one, over TCP (with the token) and the socket.
func (a *apiEnv) checkBodyLimits() {
	jobPath := "/v1/jobs/" + a.id
	huge := []byte(`{"spec": "` + strings.Repeat("a", daemon.MaxBodyBytes+1) + `"}`)
	hugeTarget := []byte(`{"targetDirectory": "` + a.allowed + "/" + strings.Repeat("a", daemon.MaxBodyBytes) + `"}`)
	cause := fmt.Sprintf("over %d bytes", daemon.MaxBodyBytes)
	for _, w := range []apiRequest{{http.MethodPost, "/v1/jobs", huge}, {http.MethodPost, jobPath + "/savepoints", hugeTarget}, {http.MethodPost, jobPath + "/stop", hugeTarget}} {
		code, body := a.tcpRequest(w.method, w.path, a.token(), w.body)
		a.expect(code, http.StatusRequestEntityTooLarge, body, cause, "TCP "+w.path)
		code, body = a.sockRequest(w.method, w.path, w.body)
		a.expect(code, http.StatusRequestEntityTooLarge, body, cause, "socket "+w.path)
	}
}

// checkPaths sends savepoint targets, stop targets and restore paths the
// daemon must not touch, over the socket and TCP.
func (a *apiEnv) checkPaths() {
	jobPath := "/v1/jobs/" + a.id
	bad := []struct{ path, why string }{
		{"relative/savepoints", "must be absolute"},
		{"./sp", "must be absolute"},
		{a.allowed + "/../outside", "contains '..'"},
		{a.allowed + "/sp/..", "contains '..'"},
		{a.allowed + "/sp\x00/etc", "NUL byte"},
		{a.outside, "outside security.allowed-paths"},
		{a.allowed + "-sibling", "outside security.allowed-paths"},
		{"/", "outside security.allowed-paths"},
	}
	for _, b := range bad {
		for _, w := range []apiRequest{
			{http.MethodPost, jobPath + "/savepoints", jsonBody(a.t, api.SavepointRequest{TargetDir: b.path})},
			{http.MethodPost, jobPath + "/stop", jsonBody(a.t, api.SavepointRequest{TargetDir: b.path})},
			{http.MethodPost, "/v1/jobs", jsonBody(a.t, api.SubmitRequest{Spec: a.spec, File: "x.yaml", SavepointPath: b.path})},
			{http.MethodPost, "/v1/jobs", jsonBody(a.t, api.SubmitRequest{Spec: a.spec, File: "x.yaml", SavepointPath: b.path, DryRun: true})},
		} {
			code, body := a.sockRequest(w.method, w.path, w.body)
			a.expect(code, http.StatusBadRequest, body, b.why, fmt.Sprintf("socket %s %q", w.path, b.path))
			code, body = a.tcpRequest(w.method, w.path, a.token(), w.body)
			a.expect(code, http.StatusBadRequest, body, b.why, fmt.Sprintf("TCP %s %q", w.path, b.path))
		}
	}
}

// checkCLIPaths: the CLI makes paths absolute, so what reaches the daemon
// through it is a path outside the allowed root; exit 2.
func (a *apiEnv) checkCLIPaths() {
	spec := a.writeSpec("again.yaml", a.spec)
	for _, args := range [][]string{
		{"savepoint", a.id, a.outside},
		{"stop", a.id, "--savepoint-path", a.outside},
		{"run", "-s", a.outside, spec},
		{"run", "--dry-run", "-s", a.outside, spec},
		{"savepoint", a.id, "../outside"},
	} {
		r := a.run(args...)
		requireNoPanic(a.t, "CLI output", r.stdout+r.stderr)
		a.expect(r.code, 2, r.stderr, "outside security.allowed-paths", fmt.Sprint(args))
	}
}

type apiRequest struct {
	method, path string
	body         []byte
}

// The control API as an attacker or a careless client meets it: the
// socket and home are private, TCP needs the token for anything that
// changes state, paths the daemon would read or write are checked, and an
// oversized body is refused without harm.
func TestControlAPIRefusals(t *testing.T) {
	parallel(t)
	start := time.Now()
	a := newAPIEnv(t)

	// Private files.
	for path, mode := range map[string]os.FileMode{a.home: 0o700, daemon.SocketPath(a.home): 0o600, daemon.TokenPath(a.home): 0o600} {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, mode, fi.Mode().Perm(), path)
	}

	jobs, trees := a.jobIDs(), a.trees()
	jobPath := "/v1/jobs/" + a.id
	target := jsonBody(t, api.SavepointRequest{TargetDir: a.allowed})
	a.checkTokens([]apiRequest{
		{http.MethodPost, "/v1/jobs", jsonBody(t, api.SubmitRequest{Spec: a.spec, File: "stateful.yaml"})},
		{http.MethodPost, jobPath + "/savepoints", target},
		{http.MethodPost, jobPath + "/stop", target},
		{http.MethodPost, jobPath + "/cancel", nil},
		{http.MethodDelete, jobPath, nil},
		{http.MethodPut, "/v1/jobs", nil},
	})
	a.unchanged(jobs, trees)
	a.checkReads()
	a.checkBodyLimits()
	a.unchanged(jobs, trees)
	a.checkPaths()
	a.unchanged(jobs, trees)
	a.checkCLIPaths()
	a.unchanged(jobs, trees)

	// The same requests with an allowed path succeed: the refusals above
	// were for the path alone.
	sp := a.mustRun("savepoint", a.id, a.allowed)
	require.True(t, strings.HasPrefix(sp, a.allowed+"/savepoint-"), sp)
	code, body := a.tcpRequest(http.MethodPost, jobPath+"/savepoints", a.token(), target)
	require.Equal(t, http.StatusOK, code, body)
	requireNoPanic(t, "daemon log", a.stderr.String())
	t.Logf("%d refusals checked, %d as required, %.1fs", a.checks, a.refused, time.Since(start).Seconds())
	scorecard.Record(t, start, scorecard.Entry{Suite: "control API refusals, real binary",
		Faults:  "missing/wrong tokens, oversized bodies, relative/../NUL/outside paths",
		Planned: a.checks, Fired: a.refused, Cases: a.checks})
}

// A symlink inside an allowed root must not lead the daemon outside it:
// security.allowed-paths compares cleaned strings, so today a savepoint
// aimed at allowed/link (-> outside) is written outside, and run -s reads
// from there.
func TestAllowedPathsSymlinkEscape(t *testing.T) {
	parallel(t)
	a := newAPIEnv(t)
	link := filepath.Join(a.allowed, "link")
	require.NoError(t, os.Symlink(a.outside, link))
	before := treeSnapshot(t, a.outside)
	r := a.run("savepoint", a.id, link)
	require.Equal(t, 2, r.code, "savepoint through a symlink out of the allowed root: %s%s", r.stdout, r.stderr)
	require.Contains(t, r.stderr, "outside security.allowed-paths")
	require.Equal(t, before, treeSnapshot(t, a.outside), "written outside the allowed root")
}

// A symlink swapped in after the check must not redirect a savepoint
// outside security.allowed-paths either: a flipper turns allowed/link back
// and forth between a directory and a symlink to outside/ while savepoints
// are aimed at allowed/link. The daemon writes under the allowed root
// through a handle on it that does not follow links out of it, so every
// savepoint either lands inside or fails; before, 20 of 150 landed outside.
func TestAllowedPathsSymlinkRace(t *testing.T) {
	parallel(t)
	start := time.Now()
	a := newAPIEnv(t)
	link := filepath.Join(a.allowed, "link")
	require.NoError(t, os.Mkdir(link, 0o700))
	stop := make(chan struct{})
	flipped := make(chan int)
	go func() {
		n := 0
		defer func() { flipped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.RemoveAll(link)
			_ = os.Symlink(a.outside, link)
			time.Sleep(time.Duration(n%3) * 300 * time.Microsecond)
			_ = os.Remove(link)
			_ = os.Mkdir(link, 0o700)
			time.Sleep(time.Duration(n%5) * 200 * time.Microsecond)
			n++
		}
	}()
	const attempts = 150
	ok, refused, failed := 0, 0, 0
	body := jsonBody(t, api.SavepointRequest{TargetDir: link})
	for range attempts {
		code, resp := a.sockRequest(http.MethodPost, "/v1/jobs/"+a.id+"/savepoints", body)
		switch {
		case code == http.StatusOK:
			ok++
		case code == http.StatusBadRequest && strings.Contains(resp, "outside security.allowed-paths"):
			refused++
		default:
			failed++ // the link turned into a symlink (or vanished) midway
		}
	}
	close(stop)
	flips := <-flipped
	escaped, _ := filepath.Glob(filepath.Join(a.outside, "savepoint-*"))
	t.Logf("%d savepoints: %d written inside, %d refused at the check, %d failed midway; %d flips; %d outside", attempts, ok, refused, failed, flips, len(escaped))
	require.Empty(t, escaped, "savepoints written outside the allowed root")
	require.Positive(t, flips)
	require.Equal(t, api.StateRunning, a.info(a.id).State, "the job survives the failed savepoints")
	requireNoPanic(t, "daemon log", a.stderr.String())
	scorecard.Record(t, start, scorecard.Entry{Suite: "allowed-paths symlink race, real binary",
		Faults:  fmt.Sprintf("a directory of the savepoint target swapped for a symlink out of the allowed root (%d flips)", flips),
		Planned: attempts, Fired: attempts - len(escaped), Cases: attempts})
}
