package s3test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Transport is a fault-injecting http.RoundTripper between an S3 client
// and a real server: each request is matched against the rules in order,
// and the first active rule that matches does its fault. Faults:
//
//   - Status answers with an S3 error (500 InternalError, 503 SlowDown …)
//     without reaching the server;
//   - Hang holds the request until its context ends (a timeout);
//   - CutRequest sends the request but breaks the connection after
//     CutAfter bytes of its body: the server gets a partial request;
//   - CutResponse lets the server carry the request out, then breaks the
//     connection before the answer: the client cannot tell it succeeded.
type Transport struct {
	Base http.RoundTripper

	mu    sync.Mutex
	rules []*Rule
	seen  []Seen
}

// Fault is what a rule does.
type Fault int

const (
	Status Fault = iota
	Hang
	CutRequest
	CutResponse
)

func (f Fault) String() string {
	return [...]string{"status", "hang", "cut-request", "cut-response"}[f]
}

// Rule is one fault and the requests it hits.
type Rule struct {
	Name  string
	Match func(r *http.Request) bool // nil: every request
	Fault Fault
	Code  int    // Status: the HTTP status (500, 503)
	S3    string // Status: the S3 error code (InternalError, SlowDown)
	// CutAfter is how many body bytes CutRequest lets through.
	CutAfter int
	// Times bounds how often the rule fires (0: unbounded); Every fires
	// it on every Every-th matching request (0 or 1: each).
	Times, Every int
	// Until ends the rule (zero: never).
	Until time.Time

	matched, fired int
}

// Seen is a request that went through the transport.
type Seen struct {
	Method, Path, Query string
	Fault               string // the rule that hit it ("" none)
	Status              int    // the answer's status (0: none)
	At                  time.Time
}

// NewTransport returns a transport over a fresh connection pool.
func NewTransport() *Transport {
	return &Transport{Base: http.DefaultTransport.(*http.Transport).Clone()}
}

// Add adds rules.
func (t *Transport) Add(rules ...*Rule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules = append(t.rules, rules...)
}

// Clear removes every rule.
func (t *Transport) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules = nil
}

// Fired returns how often each rule fired, by name.
func (t *Transport) Fired() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	for _, r := range t.rules {
		out[r.Name] += r.fired
	}
	return out
}

// Seen returns the requests so far.
func (t *Transport) Seen() []Seen {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Seen(nil), t.seen...)
}

// CloseIdleConnections closes the pool's idle connections.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t *Transport) pick(r *http.Request) *Rule {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rule := range t.rules {
		if (!rule.Until.IsZero() && time.Now().After(rule.Until)) || (rule.Times > 0 && rule.fired >= rule.Times) {
			continue
		}
		if rule.Match != nil && !rule.Match(r) {
			continue
		}
		rule.matched++
		if rule.Every > 1 && rule.matched%rule.Every != 0 {
			continue
		}
		rule.fired++
		return rule
	}
	return nil
}

func (t *Transport) record(r *http.Request, rule *Rule, status int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: status, At: time.Now()}
	if rule != nil {
		s.Fault = rule.Name
	}
	t.seen = append(t.seen, s)
}

// ErrCut is the error of a connection the transport broke.
var ErrCut = errors.New("connection reset by peer (injected)")

func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	rule := t.pick(r)
	if rule == nil {
		resp, err := t.Base.RoundTrip(r)
		status := 0
		if err == nil {
			status = resp.StatusCode
		}
		t.record(r, nil, status)
		return resp, err
	}
	switch rule.Fault {
	case Status:
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			_ = r.Body.Close()
		}
		t.record(r, rule, rule.Code)
		body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message></Error>`, rule.S3)
		return &http.Response{StatusCode: rule.Code, Status: fmt.Sprintf("%d %s", rule.Code, http.StatusText(rule.Code)),
			Header: http.Header{"Content-Type": {"application/xml"}}, Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	case Hang:
		t.record(r, rule, 0)
		<-r.Context().Done()
		return nil, r.Context().Err()
	case CutRequest:
		t.record(r, rule, 0)
		if r.Body != nil {
			r2 := r.Clone(r.Context())
			r2.Body = &cutBody{r: r.Body, left: rule.CutAfter}
			resp, err := t.Base.RoundTrip(r2)
			if err == nil {
				_ = resp.Body.Close()
			}
		}
		return nil, ErrCut
	default: // CutResponse
		resp, err := t.Base.RoundTrip(r)
		if err != nil {
			t.record(r, rule, 0)
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		t.record(r, rule, resp.StatusCode)
		return nil, fmt.Errorf("read answer: %w", ErrCut)
	}
}

// cutBody fails after left bytes, as a connection that broke mid-request.
type cutBody struct {
	r    io.ReadCloser
	left int
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, ErrCut
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}

func (b *cutBody) Close() error { return b.r.Close() }

// IsMetadataPut matches the PUT of a snapshot's _metadata.
func IsMetadataPut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/_metadata")
}

// IsComplete matches CompleteMultipartUpload below prefix (a key prefix
// such as "out/").
func IsComplete(prefix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.URL.Query().Has("uploadId") && strings.Contains(r.URL.Path, "/"+prefix)
	}
}
