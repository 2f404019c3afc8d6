package ha

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// A submission placed on a daemon that died a moment ago (its lease has
// not expired, so it is still a member) is placed again on a live one;
// other requests for a dead owner still get the error that names it.
func TestSubmissionSkipsAnUnreachableDaemon(t *testing.T) {
	// a: this daemon; b: dead (nothing listens at its address); c: live.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := dead.Addr().String()
	require.NoError(t, dead.Close())
	var atC []string
	c := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		atC = append(atC, string(body))
		_, _ = io.WriteString(w, `{"id":"at-c"}`)
	}))
	defer c.Close()
	n := &Node{cfg: Config{Name: "a"}, log: zerolog.Nop(), view: newView(nil), held: map[string]*claim{}}
	n.view.members["b"] = Member{Name: "b", Addr: deadAddr} // owns nothing: placed first
	n.view.members["c"] = Member{Name: "c", Addr: strings.TrimPrefix(c.URL, "http://")}
	n.view.members["a"] = Member{Name: "a", Addr: "127.0.0.1:1"}
	n.view.jobs["j1"] = Job{}
	n.view.owners["j1"] = map[string]candidate{"k": {name: "a", rev: 1}}
	local := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"id":"local"}`) })
	h := n.Forward(local)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/jobs", strings.NewReader(`{"spec":"s","requestId":"r1"}`)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"id":"at-c"}`, rec.Body.String(), "placed again, on the live daemon c")
	require.Equal(t, []string{`{"spec":"s","requestId":"r1"}`}, atC, "with its whole body, once")

	// With c gone too, the submission is served here.
	c.Close()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/jobs", strings.NewReader(`{"spec":"s"}`)))
	require.JSONEq(t, `{"id":"local"}`, rec.Body.String())

	// A request for a job the dead daemon owns is not moved: its owner is
	// named.
	n.view.jobs["j2"] = Job{}
	n.view.owners["j2"] = map[string]candidate{"k": {name: "b", rev: 1}}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/jobs/j2/cancel", nil))
	require.Equal(t, http.StatusBadGateway, rec.Code)
	require.Contains(t, rec.Body.String(), "daemon b")
}

// A request that names a job by its name (api.FindJob's rule: a unique
// name, or the one job of that name that has not ended) is forwarded to
// the job's owner as one naming it by id is, rewritten to the id, so the
// owner serves the job the forwarder found. A name two live jobs share is
// not resolved here: the local daemon answers it (ambiguous) unchanged.
func TestForwardFindsJobsByName(t *testing.T) {
	cl, err := etcdserver.Start(etcdserver.Config{Dir: t.TempDir(), Members: 1})
	require.NoError(t, err)
	defer cl.Close()
	// daemon serves what reaches daemon name: its name and the path.
	daemon := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, name+" "+r.URL.RequestURI())
		})
	}
	atA := httptest.NewServer(daemon("a"))
	defer atA.Close()
	jobRef := func(rec json.RawMessage) api.JobRef {
		var r struct {
			Name  string       `json:"name"`
			State api.JobState `json:"state"`
		}
		_ = json.Unmarshal(rec, &r)
		return api.JobRef{Name: r.Name, State: r.State}
	}
	start := func(name, addr string) *Node {
		n, err := Start(Config{Endpoints: cl.Endpoints(), ClusterID: "t", LeaseTTL: 2 * time.Second,
			Name: name, Addr: addr, Log: zerolog.Nop(), JobRef: jobRef})
		require.NoError(t, err)
		n.Run(newHost())
		return n
	}
	a := start("a", strings.TrimPrefix(atA.URL, "http://"))
	defer a.Close()
	b := start("b", "127.0.0.1:1")
	defer b.Close()
	viaB := b.Forward(daemon("b"))
	get := func(path string) string {
		rec := httptest.NewRecorder()
		viaB.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return rec.Body.String()
	}
	record := func(id, name string, state api.JobState) json.RawMessage {
		return json.RawMessage(`{"id":"` + id + `","name":"` + name + `","state":"` + string(state) + `"}`)
	}
	const ja, jb = "aa11", "bb22"
	require.NoError(t, a.Save(ja, true, "", record(ja, "user-windows", api.StateRunning)))
	require.Eventually(t, func() bool { js := b.Jobs(); return len(js) == 1 && js[0].Owner == "a" }, 5*time.Second, 10*time.Millisecond)

	require.Equal(t, "a /v1/jobs/"+ja+"/checkpoints?n=1", get("/v1/jobs/user-windows/checkpoints?n=1"), "by name, to its owner, as its id")
	require.Equal(t, "a /v1/jobs/"+ja, get("/v1/jobs/aa"), "by id prefix")
	require.Equal(t, "b /v1/jobs/nobody", get("/v1/jobs/nobody"), "no such job: served here, unchanged")

	// A second live job of that name, on b: the name is ambiguous.
	require.NoError(t, b.Save(jb, true, "", record(jb, "user-windows", api.StateRunning)))
	require.Eventually(t, func() bool { return len(b.Jobs()) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, "b /v1/jobs/user-windows/savepoints", get("/v1/jobs/user-windows/savepoints"), "ambiguous: served here, unchanged")

	// a's job ends: the name is b's live job's.
	require.NoError(t, a.Save(ja, false, "", record(ja, "user-windows", api.StateCanceled)))
	a.Ended(ja)
	require.Eventually(t, func() bool {
		return strings.HasPrefix(get("/v1/jobs/user-windows"), "b /v1/jobs/"+jb)
	}, 5*time.Second, 10*time.Millisecond, "the one run of the name that has not ended")
	require.NoError(t, b.Save(jb, false, "", record(jb, "user-windows", api.StateCanceled)))
	b.Ended(jb)
}
