package ha

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
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
	n := &Node{cfg: Config{Name: "a"}, log: zerolog.Nop(), view: newView(), held: map[string]*claim{}}
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
