package ha

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// ForwardedHeader marks a request one daemon forwarded to another (its
// value: the forwarding daemon); a forwarded request is never forwarded
// again, so daemons whose views differ for a moment cannot loop.
const ForwardedHeader = "X-Flinkgo-Forwarded-By"

// Forward serves the control API of a cluster: a request for a job that
// another daemon owns (by id, unique id prefix or name: see target) goes
// to that daemon, a
// submission to the daemon the placement picks (or to the owner of the
// job an earlier submission with its request id created); everything
// else is served by local. It forwards with the cluster token, so it must
// sit after the local daemon's own authorization.
func (n *Node) Forward(local http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(ForwardedHeader) != "" {
			local.ServeHTTP(w, r)
			return
		}
		to, err := n.target(r)
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, &api.Error{Code: api.CodeTooLarge, Message: err.Error()})
			return
		}
		n.serveAt(w, r, to, local, map[string]bool{})
	})
}

// serveAt serves r at to (nil: locally). A submission that a placed
// daemon never received (it could not be dialed: it died and its lease has
// not expired yet, so it still looks live) is placed again without it
// (tried names those already tried): nothing reached it, so nothing can
// be created twice; the request id guards the rest.
func (n *Node) serveAt(w http.ResponseWriter, r *http.Request, to *Member, local http.Handler, tried map[string]bool) {
	if to == nil {
		local.ServeHTTP(w, r)
		return
	}
	body, replace := resendable(r)
	n.proxy(*to, func(err error) bool {
		if !replace || !notDialed(err) {
			return false
		}
		tried[to.Name] = true
		n.log.Warn().Err(err).Str("daemon", to.Name).Msg("placed daemon unreachable: placing the submission again without it")
		r.Body = io.NopCloser(bytes.NewReader(body))
		n.serveAt(w, r, n.placeWithout(tried), local, tried)
		return true
	}).ServeHTTP(w, r)
}

// resendable reports whether r is a submission that may be placed again,
// with its body (already read into memory by submitTarget).
func resendable(r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost || strings.TrimSuffix(r.URL.Path, "/") != "/v1/jobs" {
		return nil, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// notDialed reports whether a forward failed before its request could
// reach the other daemon (the connection was never made).
func notDialed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// placeWithout is the placement among the members not in tried (nil:
// this daemon, or nobody else is left).
func (n *Node) placeWithout(tried map[string]bool) *Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	var members []Member
	for _, m := range n.view.memberList() {
		if !tried[m.Name] {
			members = append(members, m)
		}
	}
	return n.memberOf(Place(members, n.ownedCounts()))
}

// target is the member a request goes to, nil for this daemon. A request
// for a job names it by id, unique id prefix or name (api.FindJob over the
// cluster's view); one the view resolves is rewritten to name the job by
// its id, so the daemon that serves it finds the same job even if its own
// view differs for a moment. A ref the view does not resolve (no such job,
// several, or a job so new that the watch has not brought it yet) is
// served here unchanged: the local daemon answers with the same rule.
func (n *Node) target(r *http.Request) (*Member, error) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if r.Method == http.MethodPost && path == "/v1/jobs" {
		return n.submitTarget(r)
	}
	rest, ok := strings.CutPrefix(path, "/v1/jobs/")
	if !ok || rest == "" {
		return nil, nil
	}
	ref, _, _ := strings.Cut(rest, "/")
	n.mu.Lock()
	defer n.mu.Unlock()
	id := n.resolve(ref)
	if id == "" {
		return nil, nil
	}
	if id != ref {
		r.URL.Path = "/v1/jobs/" + id + strings.TrimPrefix(r.URL.Path, "/v1/jobs/"+ref)
		r.URL.RawPath = ""
	}
	return n.memberOf(n.view.owner(id)), nil
}

// submitTarget reads the body (put back for whoever serves it) for the
// request id and dry-run flag.
func (n *Node) submitTarget(r *http.Request) (*Member, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		RequestID string `json:"requestId"`
		DryRun    bool   `json:"dryRun"`
	}
	_ = json.Unmarshal(body, &req) // a bad body is the local daemon's to refuse
	if req.DryRun {
		return nil, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if req.RequestID != "" {
		for id, j := range n.view.jobs {
			if j.RequestID == req.RequestID {
				return n.memberOf(n.view.owner(id)), nil
			}
		}
	}
	return n.memberOf(Place(n.view.memberList(), n.ownedCounts())), nil
}

// ownedCounts counts the jobs each daemon owns. Called with n.mu held.
func (n *Node) ownedCounts() map[string]int {
	owned := n.view.owned()
	for id := range n.held { // this daemon's newest jobs may not be in the view yet
		if n.view.owner(id) == "" {
			owned[n.cfg.Name]++
		}
	}
	return owned
}

// resolve finds a job by id, unique id prefix or name: api.FindJob over
// the view's jobs ("" when it finds none). Called with n.mu held.
func (n *Node) resolve(ref string) string {
	if _, ok := n.view.jobs[ref]; ok {
		return ref
	}
	refs := make([]api.JobRef, 0, len(n.view.jobs))
	for id, j := range n.view.jobs {
		r := j.ref
		r.ID = id
		refs = append(refs, r)
	}
	id, err := api.FindJob(ref, refs)
	if err != nil {
		return ""
	}
	return id
}

// memberOf is the live member named name, nil for this daemon, nobody or
// a daemon that left. Called with n.mu held.
func (n *Node) memberOf(name string) *Member {
	m, ok := n.view.members[name]
	if name == "" || name == n.cfg.Name || !ok {
		return nil
	}
	return &m
}

// proxy forwards to to. A failed forward is first offered to retry,
// which reports whether it answered the request itself.
func (n *Node) proxy(to Member, retry func(error) bool) http.Handler {
	target := &url.URL{Scheme: "http", Host: to.Addr}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = to.Addr
			pr.Out.Header.Set("Authorization", "Bearer "+n.token)
			pr.Out.Header.Set(ForwardedHeader, n.cfg.Name)
			pr.Out.Header.Del("Cookie")
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			if retry != nil && retry(err) {
				return
			}
			writeError(w, http.StatusBadGateway, &api.Error{Code: api.CodeUnavailable,
				Message: fmt.Sprintf("the job's owner, daemon %s at %s, did not answer: %v (if it died, another daemon takes its jobs within %s)", to.Name, to.Addr, err, n.cfg.LeaseTTL)})
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The owner may wait for a savepoint or a stop: lift the write
		// timeout, as the local handlers that wait do.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		p.ServeHTTP(w, r)
	})
}

func writeError(w http.ResponseWriter, status int, e *api.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}
