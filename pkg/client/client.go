// Package client is the typed client of the flinkgo daemon's control API,
// over its unix socket (unix:///path) or TCP (http://host:port).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// ErrNoAnswer: a request went to the daemon but no answer came back (it
// went away meanwhile): the request may or may not have been carried out.
var ErrNoAnswer = errors.New("the flinkgo daemon did not answer")

// Client talks to one daemon.
type Client struct {
	base  string // http://host or http://unix
	http  *http.Client
	token string
	addr  string
}

// New returns a client for address: a unix socket path (optionally
// unix://path) or an http:// URL. token is sent as the bearer token.
func New(address, token string) (*Client, error) {
	c := &Client{token: token, addr: address}
	switch {
	case strings.HasPrefix(address, "http://"), strings.HasPrefix(address, "https://"):
		u, err := url.Parse(address)
		if err != nil {
			return nil, api.Errorf(api.CodeUsage, "bad daemon address %q: %v", address, err)
		}
		c.base = strings.TrimSuffix(u.String(), "/")
		c.http = &http.Client{}
	default:
		sock := strings.TrimPrefix(address, "unix://")
		c.base = "http://unix"
		c.http = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
		}}
	}
	return c, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		switch {
		case ctx.Err() != nil:
			return &api.Error{Code: api.CodeTimeout, Message: fmt.Sprintf("%s %s: %v", method, path, ctx.Err())}
		case errors.As(err, &op) && op.Op == "dial":
			return &api.Error{Code: api.CodeUnavailable, Message: fmt.Sprintf("cannot reach the flinkgo daemon at %s: %v; start one with `flinkgo daemon`", c.addr, unwrapNet(err))}
		}
		return api.Errorf(api.CodeUnavailable, "%w: %s %s at %s: %v", ErrNoAnswer, method, path, c.addr, unwrapNet(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return api.Errorf(api.CodeUnavailable, "%w: %s %s at %s: %v", ErrNoAnswer, method, path, c.addr, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error  *api.Error      `json:"error"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			if out != nil && len(e.Result) > 0 {
				_ = json.Unmarshal(e.Result, out)
			}
			return e.Error
		}
		return &api.Error{Code: api.CodeFailed, Message: fmt.Sprintf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

func unwrapNet(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// SubmitAttempts bounds how often Submit sends a request with a RequestID
// whose answer it could not get (about 3 s of retries in all).
const SubmitAttempts = 5

// Submit submits a job (or plans its restore with DryRun). With DryRun
// and a plan that cannot be carried out, the plan is returned with the error.
// With a RequestID, a request whose answer was lost (ErrNoAnswer: the job
// may or may not have been created) is retried with the same id, also
// while the daemon cannot be reached; the daemon answers a repeated id
// with the job it created, if any, so a retry never creates a second job.
// The error after the last attempt still wraps ErrNoAnswer.
func (c *Client) Submit(ctx context.Context, req api.SubmitRequest) (*api.SubmitResponse, error) {
	var out api.SubmitResponse
	err := c.do(ctx, http.MethodPost, "/v1/jobs", req, &out)
	// Retry only once a request may have been carried out: a daemon that
	// cannot be reached at all got nothing.
	lost := errors.Is(err, ErrNoAnswer)
	wait := 200 * time.Millisecond
	for attempt := 1; attempt < SubmitAttempts && lost && req.RequestID != "" && api.CodeOf(err) == api.CodeUnavailable; attempt++ {
		select {
		case <-ctx.Done():
			return &out, err
		case <-time.After(wait):
		}
		wait *= 2
		out = api.SubmitResponse{}
		err = c.do(ctx, http.MethodPost, "/v1/jobs", req, &out)
	}
	if lost && err != nil && !errors.Is(err, ErrNoAnswer) && api.CodeOf(err) == api.CodeUnavailable {
		err = api.Errorf(api.CodeUnavailable, "%w (%v)", ErrNoAnswer, err)
	}
	return &out, err
}

// List lists jobs (all: also those ended more than an hour ago).
func (c *Client) List(ctx context.Context, all bool) ([]api.JobInfo, error) {
	var out []api.JobInfo
	path := "/v1/jobs"
	if all {
		path += "?all=true"
	}
	return out, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Info returns a job's details; id may be a unique prefix.
func (c *Client) Info(ctx context.Context, id string) (*api.JobInfo, error) {
	var out api.JobInfo
	return &out, c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), nil, &out)
}

// Checkpoints returns a job's checkpoint history.
func (c *Client) Checkpoints(ctx context.Context, id string) (*api.CheckpointsInfo, error) {
	var out api.CheckpointsInfo
	return &out, c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/checkpoints", nil, &out)
}

// History returns what the daemon sampled of a job after since (ms since
// the epoch; 0: the last 15 minutes).
func (c *Client) History(ctx context.Context, id string, since int64) (*api.JobHistory, error) {
	var out api.JobHistory
	path := "/v1/jobs/" + url.PathEscape(id) + "/history"
	if since > 0 {
		path += "?since=" + strconv.FormatInt(since, 10)
	}
	return &out, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Exceptions returns a job's last failures, the newest first.
func (c *Client) Exceptions(ctx context.Context, id string) (*api.JobExceptions, error) {
	var out api.JobExceptions
	return &out, c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/exceptions", nil, &out)
}

// Logs returns the tail of a job's print output and its recent events, or
// what came after q.From.
func (c *Client) Logs(ctx context.Context, id string, q api.LogsQuery) (*api.JobLogs, error) {
	var out api.JobLogs
	v := url.Values{}
	if q.Lines > 0 {
		v.Set("lines", strconv.Itoa(q.Lines))
	}
	if q.From != nil {
		v.Set("output", strconv.FormatInt(q.From.Output, 10))
		v.Set("events", strconv.FormatInt(q.From.Events, 10))
	}
	path := "/v1/jobs/" + url.PathEscape(id) + "/logs"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	return &out, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Cancel cancels a job.
func (c *Client) Cancel(ctx context.Context, id string) (*api.CancelResponse, error) {
	var out api.CancelResponse
	return &out, c.do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, &out)
}

// Savepoint takes a savepoint of a running job.
func (c *Client) Savepoint(ctx context.Context, id string, req api.SavepointRequest) (*api.SavepointResponse, error) {
	var out api.SavepointResponse
	return &out, c.do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/savepoints", req, &out)
}

// Stop stops a job with a savepoint.
func (c *Client) Stop(ctx context.Context, id string, req api.SavepointRequest) (*api.SavepointResponse, error) {
	var out api.SavepointResponse
	return &out, c.do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/stop", req, &out)
}

// WaitState polls until the job is in one of states (or terminal) or ctx ends.
func (c *Client) WaitState(ctx context.Context, id string, states ...api.JobState) (*api.JobInfo, error) {
	for {
		info, err := c.Info(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, s := range states {
			if info.State == s {
				return info, nil
			}
		}
		if info.State.Terminal() {
			return info, nil
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WatchFirstAttempt polls a job that was just submitted until its first
// attempt failed (FirstAttemptFailed), the job ended, d passed or ctx
// ended, and returns its details then. It is how run reports a job that
// fails a moment after it started instead of exiting 0 for it.
func (c *Client) WatchFirstAttempt(ctx context.Context, id string, d time.Duration) (*api.JobInfo, error) {
	deadline := time.Now().Add(d)
	for {
		info, err := c.Info(ctx, id)
		if err != nil {
			return nil, err
		}
		if FirstAttemptFailed(info) || info.State.Terminal() || !time.Now().Before(deadline) {
			return info, nil
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(min(50*time.Millisecond, time.Until(deadline))):
		}
	}
}

// FirstAttemptFailed reports whether the job's first attempt failed: it is
// FAILED, failing over or restarting, or it restarted already.
func FirstAttemptFailed(info *api.JobInfo) bool {
	switch info.State {
	case api.StateFailed, api.StateFailing, api.StateRestarting:
		return true
	}
	return info.Restarts > 0
}

// LoginLink asks for a one-time dashboard login link (needs the token or
// the unix socket).
func (c *Client) LoginLink(ctx context.Context) (*api.LoginLink, error) {
	var out api.LoginLink
	return &out, c.do(ctx, http.MethodPost, "/v1/ui/login-links", nil, &out)
}

// Drain moves the daemon's jobs to the other daemons of its HA cluster
// (stop with savepoint, resumed elsewhere) and stops it taking new ones.
func (c *Client) Drain(ctx context.Context) (*api.DrainResponse, error) {
	var out api.DrainResponse
	return &out, c.do(ctx, http.MethodPost, "/v1/daemon/drain", nil, &out)
}
