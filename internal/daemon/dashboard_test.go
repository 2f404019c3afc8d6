package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/internal/daemon/dashboard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

const dashJob = `
name: dash
parallelism: 2
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, rate: 20000}
  - {uid: even, type: filter, from: [gen], expr: "idx % 2 == 0"}
  - {uid: out, type: discard, from: [even]}
`

// dash is a daemon on a temporary home with its REST listener on a free
// loopback port, and an HTTP client that talks to it like a browser would
// (no redirects followed, cookies set by hand).
type dash struct {
	t    *testing.T
	d    *daemon.Daemon
	base string // http://127.0.0.1:port
	sp   string // state.savepoints.dir
	http *http.Client
	// stopped: stop has run.
	stopped bool
}

func startDash(t *testing.T) *dash { return startDashWith(t, "") }

// startDashWith starts the daemon with extra lines in its config file.
func startDashWith(t *testing.T, extraConfig string) *dash {
	t.Helper()
	return startDashAt(t, t.TempDir(), extraConfig)
}

// startDashAt starts the daemon on home with extra lines in its config
// file (shut down at the test's end, or by stop).
func startDashAt(t *testing.T, home, extraConfig string) *dash {
	t.Helper()
	sp := filepath.Join(home, "sp")
	conf := filepath.Join(home, "flinkgo.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf("rest.address: 127.0.0.1:0\nstate.savepoints.dir: %s\nstate.checkpoints.dir: %s\n%s",
		sp, filepath.Join(home, "chk"), extraConfig)), 0o600))
	cfg, err := config.Load(home, conf, nil)
	require.NoError(t, err)
	d, err := daemon.Start(daemon.Options{Config: cfg, Log: zerolog.Nop(), Registry: all.Registry()})
	require.NoError(t, err)
	x := &dash{t: t, d: d, base: "http://" + d.RestAddr(), sp: sp,
		http: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	t.Cleanup(x.stop)
	return x
}

// stop shuts the daemon down, once.
func (x *dash) stop() {
	if x.stopped {
		return
	}
	x.stopped = true
	x.http.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = x.d.Shutdown(ctx)
}

// do sends a request; headers are given as "Name: value" strings.
func (x *dash) do(method, path string, headers ...string) (int, http.Header, string) {
	x.t.Helper()
	req, err := http.NewRequest(method, x.base+path, strings.NewReader("{}"))
	require.NoError(x.t, err)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := x.http.Do(req)
	require.NoError(x.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(x.t, err)
	return resp.StatusCode, resp.Header, string(body)
}

func (x *dash) getJSON(path string, v any) {
	x.t.Helper()
	code, _, body := x.do(http.MethodGet, path)
	require.Equal(x.t, http.StatusOK, code, body)
	require.NoError(x.t, json.Unmarshal([]byte(body), v), body)
}

func (x *dash) submit() string {
	x.t.Helper()
	resp, err := x.d.Submit(api.SubmitRequest{Spec: dashJob, File: "dash.yaml"})
	require.NoError(x.t, err)
	require.Equal(x.t, api.StateRunning, resp.State)
	return resp.ID
}

func (x *dash) state(id string) api.JobState {
	info, err := x.d.Info(id)
	require.NoError(x.t, err)
	return info.State
}

var csrfMeta = regexp.MustCompile(`<meta name="flinkgo-csrf" content="([0-9a-f]{64})">`)

// login follows a fresh one-time link and returns the session cookie and
// its CSRF token, which only the login page carries (the page keeps it in
// the origin's localStorage and replaces itself with the dashboard).
func (x *dash) login() (cookie, csrf string) {
	x.t.Helper()
	link := x.d.LoginLink()
	u, err := url.Parse(link.URL)
	require.NoError(x.t, err)
	code, h, body := x.do(http.MethodGet, u.RequestURI())
	require.Equal(x.t, http.StatusOK, code, body)
	require.Contains(x.t, body, `<script src="/assets/login.js">`)
	require.Equal(x.t, "no-store", h.Get("Cache-Control"))
	m := csrfMeta.FindStringSubmatch(body)
	require.NotNil(x.t, m, body)
	set := h.Get("Set-Cookie")
	_, port, _ := strings.Cut(x.d.RestAddr(), ":")
	require.True(x.t, strings.HasPrefix(set, "flinkgo_session_"+port+"="), "the cookie is named after the port: %s", set)
	require.Contains(x.t, set, "HttpOnly")
	require.Contains(x.t, set, "SameSite=Strict")
	cookie = strings.SplitN(set, ";", 2)[0]
	require.True(x.t, x.session(cookie, m[1]))
	return cookie, m[1]
}

// session asks whether a cookie and token make a live session.
func (x *dash) session(cookie, csrf string) bool {
	x.t.Helper()
	var s api.SessionInfo
	code, _, body := x.do(http.MethodGet, "/v1/ui/session", "Cookie: "+cookie, dashboard.CSRFHeader+": "+csrf)
	require.Equal(x.t, http.StatusOK, code)
	require.NoError(x.t, json.Unmarshal([]byte(body), &s))
	return s.LoggedIn
}

func TestDashboardPagesAndReadAPIs(t *testing.T) {
	x := startDash(t)
	id := x.submit()

	code, h, body := x.do(http.MethodGet, "/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, h.Get("Content-Type"), "text/html")
	require.Contains(t, body, "/assets/app.js")
	require.Equal(t, dashboard.ContentSecurityPolicy, h.Get("Content-Security-Policy"))
	require.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Equal(t, "DENY", h.Get("X-Frame-Options"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	for path, typ := range map[string]string{"/assets/app.js": "javascript", "/assets/style.css": "text/css"} {
		code, h, _ := x.do(http.MethodGet, path)
		require.Equal(t, http.StatusOK, code, path)
		require.Contains(t, h.Get("Content-Type"), typ, path)
	}
	code, _, _ = x.do(http.MethodGet, "/assets/nope.js")
	require.Equal(t, http.StatusNotFound, code)

	// Rates need two of the daemon's samples, a second apart.
	var ov api.Overview
	require.Eventually(t, func() bool {
		x.getJSON("/v1/overview", &ov)
		return len(ov.Jobs) == 1 && ov.Jobs[0].RecordsInPerSec > 0
	}, 10*time.Second, 50*time.Millisecond)
	require.Len(t, ov.Jobs, 1)
	j := ov.Jobs[0]
	require.Equal(t, id, j.ID)
	require.Equal(t, api.StateRunning, j.State)
	require.Equal(t, 1, ov.States[api.StateRunning])
	require.Positive(t, j.UptimeMs)
	require.InDelta(t, 20000, j.RecordsInPerSec, 12000, "the source runs at 20,000 records/s")
	require.InDelta(t, 10000, j.RecordsOutPerSec, 6000, "the filter passes half to the sink")
	require.Empty(t, ov.Attention)
	require.Eventually(t, func() bool {
		x.getJSON("/v1/overview", &ov)
		return ov.Jobs[0].LastCheckpoint != nil
	}, 10*time.Second, 50*time.Millisecond)

	var info api.JobInfo
	x.getJSON("/v1/jobs/"+id, &info)
	require.Len(t, info.Operators, 3)
	require.Equal(t, []api.OperatorInput{{UID: "gen", Partitioning: "forward"}}, info.Operators[1].Inputs)
	require.Positive(t, info.Operators[0].RecordsOutPerSec)

	var cps api.CheckpointsInfo
	x.getJSON("/v1/jobs/"+id+"/checkpoints", &cps)
	require.Positive(t, cps.Counts.Triggered)
	require.Positive(t, cps.Counts.Completed)
	require.NotEmpty(t, cps.History)

	// Savepoint directories may be shared: what else lies there is skipped,
	// and a FIFO or /dev/zero posing as _metadata neither blocks the list
	// nor fills the daemon's memory.
	for _, name := range []string{"savepoint-zero", "savepoint-fifo", "savepoint-empty"} {
		require.NoError(t, os.MkdirAll(filepath.Join(x.sp, name), 0o755))
	}
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(x.sp, "savepoint-zero", "_metadata")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(x.sp, "savepoint-fifo", "_metadata"), 0o600))
	var sps []api.SavepointEntry
	x.getJSON("/v1/savepoints", &sps)
	require.Empty(t, sps)
	sp, err := x.d.Savepoint(id, api.SavepointRequest{})
	require.NoError(t, err)
	x.getJSON("/v1/savepoints", &sps)
	require.Len(t, sps, 1)
	require.Equal(t, sp.Path, sps[0].Path)
	require.Equal(t, id, sps[0].JobID)
	require.Equal(t, "savepoint", sps[0].Kind)
	require.Positive(t, sps[0].Size)

	var detail api.SavepointDetail
	x.getJSON("/v1/savepoints/inspect?path="+url.QueryEscape(sp.Path), &detail)
	require.True(t, detail.Complete, detail.Problem)
	require.Len(t, detail.Operators, 3)
	require.Contains(t, detail.Spec, "datagen")

	// A state file swapped for a FIFO is reported, not waited for, and a
	// huge _metadata is listed with a problem, not read.
	var stateFile string
	for _, op := range detail.Operators {
		if op.Bytes > 0 {
			names, _ := filepath.Glob(filepath.Join(sp.Path, op.UID+"*"))
			require.NotEmpty(t, names, op.UID)
			stateFile = names[0]
			break
		}
	}
	require.NoError(t, os.Remove(stateFile))
	require.NoError(t, syscall.Mkfifo(stateFile, 0o600))
	x.getJSON("/v1/savepoints/inspect?path="+url.QueryEscape(sp.Path), &detail)
	require.False(t, detail.Complete)
	require.Contains(t, detail.Problem, "is not a regular file")
	huge := filepath.Join(x.sp, "savepoint-huge")
	require.NoError(t, os.MkdirAll(huge, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(huge, "_metadata"), nil, 0o600))
	require.NoError(t, os.Truncate(filepath.Join(huge, "_metadata"), 1<<30))
	x.getJSON("/v1/savepoints", &sps)
	require.Len(t, sps, 2)
	var hugeEntry api.SavepointEntry
	for _, s := range sps {
		if s.Path == huge {
			hugeEntry = s
		}
	}
	require.Contains(t, hugeEntry.Problem, "more than the")
	code, _, _ = x.do(http.MethodGet, "/v1/savepoints/inspect?path="+url.QueryEscape(huge))
	require.Equal(t, http.StatusNotFound, code)

	// Inspect reads only listed savepoints, never an arbitrary path.
	code, _, body = x.do(http.MethodGet, "/v1/savepoints/inspect?path="+url.QueryEscape("/etc"))
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, "not a savepoint this daemon lists")
}

func TestDashboardAttentionShowsFailedJob(t *testing.T) {
	x := startDash(t)
	resp, err := x.d.Submit(api.SubmitRequest{Spec: `
name: doomed
checkpointing: {interval: 1s}
restartStrategy: {type: none}
operators:
  - {uid: gen, type: datagen, rate: 1000}
  - {uid: boom, type: map, from: [gen], expr: "idx.nope"}
  - {uid: out, type: discard, from: [boom]}
`})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return x.state(resp.ID) == api.StateFailed }, 10*time.Second, 20*time.Millisecond)
	var ov api.Overview
	x.getJSON("/v1/overview", &ov)
	require.Len(t, ov.Attention, 1)
	a := ov.Attention[0]
	require.Equal(t, "error", a.Severity)
	require.Equal(t, resp.ID, a.JobID)
	require.Contains(t, a.Message, "job FAILED")
	var info api.JobInfo
	x.getJSON("/v1/jobs/"+resp.ID, &info)
	require.NotEmpty(t, info.Error)
	require.NotNil(t, info.ErrorTime)
}

func TestDashboardStateChangesNeedLoginAndSameOrigin(t *testing.T) {
	x := startDash(t)
	id := x.submit()
	savepoint := "/v1/jobs/" + id + "/savepoints"
	cancel := "/v1/jobs/" + id + "/cancel"
	ctJSON := "Content-Type: application/json"

	// Reading needs nothing; changing state needs the token or a session.
	code, _, _ := x.do(http.MethodGet, "/v1/jobs/"+id)
	require.Equal(t, http.StatusOK, code)
	code, _, body := x.do(http.MethodPost, cancel, ctJSON)
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Contains(t, body, "flinkgo ui")

	// Login links: a bad or reused code is refused.
	code, _, body = x.do(http.MethodGet, "/ui/login?code=guess")
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "flinkgo ui")
	link, _ := url.Parse(x.d.LoginLink().URL)
	code, _, _ = x.do(http.MethodGet, link.RequestURI())
	require.Equal(t, http.StatusOK, code)
	code, _, _ = x.do(http.MethodGet, link.RequestURI())
	require.Equal(t, http.StatusForbidden, code, "a login link works once")

	cookie, csrf := x.login()
	withCookie := "Cookie: " + cookie
	withCSRF := dashboard.CSRFHeader + ": " + csrf
	sameOrigin := "Sec-Fetch-Site: same-origin"

	// Browsers send the cookie to every server on this host, whatever its
	// port: the cookie alone must neither reveal the token nor count as a
	// session.
	code, _, body = x.do(http.MethodGet, "/v1/ui/session", withCookie)
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, body, csrf)
	require.False(t, x.session(cookie, ""))
	require.False(t, x.session(cookie, strings.Repeat("0", len(csrf))))

	// The cookie alone is not enough: a cross-site form could send it in
	// an older browser without SameSite.
	code, _, body = x.do(http.MethodPost, cancel, ctJSON, withCookie, sameOrigin)
	require.Equal(t, http.StatusUnauthorized, code, body)
	code, _, body = x.do(http.MethodPost, cancel, ctJSON, withCookie, dashboard.CSRFHeader+": "+strings.Repeat("0", len(csrf)), sameOrigin)
	require.Equal(t, http.StatusUnauthorized, code, body)
	// A request another site's page makes, even one holding the token.
	code, _, body = x.do(http.MethodPost, cancel, ctJSON, withCookie, withCSRF, "Sec-Fetch-Site: cross-site")
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Contains(t, body, "cross-origin")
	code, _, body = x.do(http.MethodPost, cancel, ctJSON, withCookie, withCSRF, "Origin: http://evil.example")
	require.Equal(t, http.StatusUnauthorized, code, body)
	// A session presses the page's buttons and nothing else: no login
	// links, no submissions.
	code, _, body = x.do(http.MethodPost, "/v1/ui/login-links", ctJSON, withCookie, withCSRF, sameOrigin)
	require.Equal(t, http.StatusUnauthorized, code, body)
	code, _, body = x.do(http.MethodPost, "/v1/jobs", ctJSON, withCookie, withCSRF, sameOrigin)
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Contains(t, body, "may only take savepoints, stop and cancel")
	require.Equal(t, api.StateRunning, x.state(id), "no refused request changed the job")
	var sps []api.SavepointEntry
	x.getJSON("/v1/savepoints", &sps)
	require.Empty(t, sps)

	// The dashboard's own requests work.
	code, _, body = x.do(http.MethodPost, savepoint, ctJSON, withCookie, withCSRF, sameOrigin, "Origin: "+x.base)
	require.Equal(t, http.StatusOK, code, body)
	var sp api.SavepointResponse
	require.NoError(t, json.Unmarshal([]byte(body), &sp))
	require.DirExists(t, sp.Path)
	require.True(t, strings.HasPrefix(sp.Path, x.sp), sp.Path)

	// Logging out ends the session.
	code, h, _ := x.do(http.MethodPost, "/v1/ui/logout", ctJSON, withCookie, withCSRF, sameOrigin)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, h.Get("Set-Cookie"), "Max-Age=0")
	code, _, body = x.do(http.MethodPost, cancel, ctJSON, withCookie, withCSRF, sameOrigin)
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.Equal(t, api.StateRunning, x.state(id))

	// The token still works for the CLI over TCP.
	code, _, body = x.do(http.MethodPost, cancel, ctJSON, "Authorization: Bearer "+x.d.Token())
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, api.StateCanceled, x.state(id))
}

func TestDashboardRefusesForeignHost(t *testing.T) {
	x := startDash(t)
	_, port, _ := strings.Cut(x.d.RestAddr(), ":")
	for _, host := range []string{"evil.example:" + port, "127.0.0.1.nip.io:" + port, "127.0.0.1:1", "evil.example"} {
		code, _, body := x.do(http.MethodGet, "/v1/overview", "Host: "+host)
		require.Equal(t, http.StatusMisdirectedRequest, code, host)
		require.Contains(t, body, "rest.allowed-hosts", host)
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port} {
		code, _, body := x.do(http.MethodGet, "/", "Host: "+host)
		require.Equal(t, http.StatusOK, code, host+": "+body)
	}
}
