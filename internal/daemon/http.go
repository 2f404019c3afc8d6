package daemon

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/flinkgo/flinkgo/internal/daemon/dashboard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// MaxBodyBytes bounds request bodies (a job spec is a few KiB).
const MaxBodyBytes = 1 << 20

// Timeouts of the control API's connections, so a slow or idle client
// cannot hold one forever: the headers must arrive within
// readHeaderTimeout, the whole request within readTimeout, and an answer
// must be written within writeTimeout, except by the handlers that wait
// for a job (long). Idle keep-alive connections close after
// rest.idleness-timeout.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	writeTimeout      = time.Minute
)

// handlerFunc is an API handler: it returns the response body or an error
// that wrap maps to a status code (after Nomad's agent HTTP handlers).
type handlerFunc func(r *http.Request) (any, error)

func (d *Daemon) handler(requireToken bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /v1/jobs", d.wrap(func(r *http.Request) (any, error) {
		return d.List(r.URL.Query().Get("all") == "true"), nil
	}))
	mux.Handle("POST /v1/jobs", long(d.wrap(func(r *http.Request) (any, error) {
		if ok, wait := d.submits.allow(clientOf(r), time.Now()); !ok {
			return nil, api.Errorf(api.CodeTooManyRequests, "too many job submissions from this client (at most %d a second, rest.submit-rate-limit in %s): retry in %s", d.cfg.SubmitRateLimit, d.configName(), wait.Round(time.Millisecond))
		}
		var req api.SubmitRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return d.Submit(req)
	})))
	mux.Handle("GET /v1/jobs/{id}", d.wrap(func(r *http.Request) (any, error) { return d.Info(r.PathValue("id")) }))
	mux.Handle("GET /v1/overview", d.wrap(func(*http.Request) (any, error) { return d.Overview(), nil }))
	mux.Handle("GET /v1/savepoints", long(d.wrap(func(*http.Request) (any, error) { return d.Savepoints(), nil })))
	mux.Handle("GET /v1/savepoints/inspect", long(d.wrap(func(r *http.Request) (any, error) { return d.Inspect(r.URL.Query().Get("path")) })))
	mux.Handle("GET /v1/jobs/{id}/checkpoints", d.wrap(func(r *http.Request) (any, error) { return d.Checkpoints(r.PathValue("id")) }))
	mux.Handle("GET /v1/jobs/{id}/history", d.wrap(func(r *http.Request) (any, error) {
		since, err := queryInt(r, "since", 0)
		if err != nil {
			return nil, err
		}
		return d.History(r.PathValue("id"), since)
	}))
	mux.Handle("GET /v1/jobs/{id}/exceptions", d.wrap(func(r *http.Request) (any, error) { return d.Exceptions(r.PathValue("id")) }))
	mux.Handle("GET /v1/jobs/{id}/logs", d.wrap(func(r *http.Request) (any, error) {
		req, err := logsRequest(r)
		if err != nil {
			return nil, err
		}
		return d.Logs(r.PathValue("id"), req)
	}))
	mux.Handle("POST /v1/jobs/{id}/cancel", long(d.wrap(func(r *http.Request) (any, error) { return d.Cancel(r.PathValue("id")) })))
	mux.Handle("POST /v1/jobs/{id}/savepoints", long(d.wrap(func(r *http.Request) (any, error) {
		var req api.SavepointRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return d.Savepoint(r.PathValue("id"), req)
	})))
	mux.Handle("POST /v1/jobs/{id}/stop", long(d.wrap(func(r *http.Request) (any, error) {
		var req api.SavepointRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return d.Stop(r.PathValue("id"), req)
	})))
	// The dashboard: its page, the browser's session, and login links,
	// which only a token holder (or the unix socket) may create.
	mux.Handle("GET /v1/ui/session", d.wrap(func(r *http.Request) (any, error) {
		return api.SessionInfo{LoggedIn: d.sessions.Authorized(r)}, nil
	}))
	mux.HandleFunc("POST /v1/ui/logout", func(w http.ResponseWriter, r *http.Request) {
		d.sessions.Logout(w, r)
		writeJSONStatus(w, http.StatusOK, api.SessionInfo{})
	})
	mux.Handle("POST /v1/ui/login-links", d.wrap(func(r *http.Request) (any, error) {
		if d.RestAddr() == "" {
			return nil, api.Errorf(api.CodeConflict, "the dashboard is off: set rest.address in the daemon config (%s) and restart the daemon", d.configName())
		}
		return d.LoginLink(), nil
	}))
	mux.HandleFunc("GET /ui/login", d.sessions.Login)
	assets := dashboard.Assets()
	mux.Handle("GET /{$}", assets)
	mux.Handle("GET /assets/", assets)
	mux.Handle("GET /v1/health", d.wrap(func(*http.Request) (any, error) { return map[string]string{"status": "ok"}, nil }))
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{d: d})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("POST /v1/daemon/drain", long(d.wrap(func(*http.Request) (any, error) { return d.Drain() })))
	var h http.Handler = mux
	if d.cluster != nil {
		h = d.cluster.Forward(h) // after authorization: it forwards with the cluster token
	}
	if requireToken {
		h = d.authorize(h)
	}
	return dashboard.SecureHeaders(limitBody(h))
}

// sessionRoutes are the state changes a dashboard session may make: the
// page's buttons. Everything else (submitting jobs, login links) needs the
// token.
var sessionRoutes = []*regexp.Regexp{
	regexp.MustCompile(`^/v1/jobs/[^/]+/(savepoints|stop|cancel)$`),
	regexp.MustCompile(`^/v1/ui/logout$`),
}

// authorize lets a request that changes state through when it carries the
// bearer token, or comes from a dashboard page: a live session cookie
// (SameSite=Strict, so other sites' pages cannot send it), the session's
// anti-CSRF token echoed in a header (which other origins can neither read
// nor send without a preflight the daemon never grants), a same-origin
// request by the browser's own account (Sec-Fetch-Site, Origin), and one of
// the dashboard's own actions.
func (d *Daemon) authorize(next http.Handler) http.Handler {
	crossOrigin := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(d.token)) == 1 {
				next.ServeHTTP(w, r)
				return
			}
		} else if d.sessions.HasCookie(r) {
			if err := crossOrigin.Check(r); err != nil {
				refuse(w, &api.Error{Code: api.CodeUnauthorized, Message: "cross-origin request refused: the dashboard changes state only from its own pages"})
				return
			}
			if !slices.ContainsFunc(sessionRoutes, func(re *regexp.Regexp) bool { return re.MatchString(r.URL.Path) }) {
				refuse(w, &api.Error{Code: api.CodeUnauthorized, Message: "a dashboard session may only take savepoints, stop and cancel jobs; this request needs the bearer token"})
				return
			}
			if d.sessions.Authorized(r) {
				next.ServeHTTP(w, r)
				return
			}
			refuse(w, &api.Error{Code: api.CodeUnauthorized, Message: "dashboard session expired or CSRF token missing: reload the page, or run `flinkgo ui` for a new login link"})
			return
		}
		refuse(w, &api.Error{Code: api.CodeUnauthorized, Message: "missing or wrong bearer token: send Authorization: Bearer <contents of $FLINKGO_HOME/token>, or log in to the dashboard with `flinkgo ui`"})
	})
}

// long lifts the write timeout of a handler that waits for a job (a
// savepoint, a stop, a start) or reads snapshots, which may take longer.
func long(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		h.ServeHTTP(w, r)
	})
}

// refuse answers a request that may not go on and closes the connection:
// without the close, Go's server would read up to 256 KiB of the unread
// body before it writes the answer, at whatever pace the client sends it.
func refuse(w http.ResponseWriter, e *api.Error) {
	w.Header().Set("Connection", "close")
	writeError(w, e)
}

// queryInt reads an integer query parameter (def when absent).
func queryInt(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, api.Errorf(api.CodeUsage, "query parameter %s must be a non-negative integer, got %q", name, v)
	}
	return n, nil
}

// logsRequest reads ?lines=N and, to follow, &output=POS&events=SEQ.
func logsRequest(r *http.Request) (api.LogsQuery, error) {
	var req api.LogsQuery
	lines, err := queryInt(r, "lines", 0)
	if err != nil {
		return req, err
	}
	req.Lines = int(min(lines, logsTailMax))
	q := r.URL.Query()
	if !q.Has("output") && !q.Has("events") {
		return req, nil
	}
	var from api.LogsPosition
	if from.Output, err = queryInt(r, "output", 0); err != nil {
		return req, err
	}
	if from.Events, err = queryInt(r, "events", 0); err != nil {
		return req, err
	}
	req.From = &from
	return req, nil
}

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &api.Error{Code: api.CodeTooLarge, Message: fmt.Sprintf("request body over %d bytes", MaxBodyBytes)}
		}
		if err.Error() == "EOF" {
			return nil // an empty body means defaults
		}
		return api.Errorf(api.CodeUsage, "bad request body: %v", err)
	}
	return nil
}

func (d *Daemon) wrap(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := h(r)
		if err != nil {
			var ae *api.Error
			if !errors.As(err, &ae) {
				ae = &api.Error{Code: api.CodeOf(err), Message: err.Error()}
			}
			if ae.Code == api.CodeFailed {
				d.log.Warn().Err(err).Str("path", r.URL.Path).Msg("request failed")
			}
			writeJSONStatus(w, status(ae.Code), struct {
				Error *api.Error `json:"error"`
				Out   any        `json:"result,omitempty"`
			}{ae, out})
			return
		}
		writeJSONStatus(w, http.StatusOK, out)
	})
}

func writeError(w http.ResponseWriter, e *api.Error) {
	writeJSONStatus(w, status(e.Code), map[string]any{"error": e})
}

func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func status(c api.Code) int {
	switch c {
	case api.CodeUsage:
		return http.StatusBadRequest
	case api.CodeInvalid:
		return http.StatusUnprocessableEntity
	case api.CodeNotFound:
		return http.StatusNotFound
	case api.CodeConflict:
		return http.StatusConflict
	case api.CodeUnauthorized:
		return http.StatusUnauthorized
	case api.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case api.CodeTimeout:
		return http.StatusGatewayTimeout
	case api.CodeTooManyRequests:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}
