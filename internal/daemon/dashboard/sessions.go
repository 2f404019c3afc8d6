package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

const (
	// CSRFHeader must echo the session's anti-CSRF token on every request
	// that changes state. The token reaches the page once, in the login
	// response, which keeps it in localStorage: storage is isolated per
	// origin, port included, while cookies are shared by every server on
	// the same host. Another origin can neither read the token nor send a
	// custom header without a CORS preflight, which the daemon never grants.
	CSRFHeader = "X-Flinkgo-CSRF"
	// LoginCodeTTL bounds how long an unused login link works.
	LoginCodeTTL = 10 * time.Minute
	// SessionTTL bounds a browser session; `flinkgo ui` makes a new one.
	SessionTTL = 12 * time.Hour
	// maxEntries bounds codes and sessions kept (oldest evicted first), so
	// repeated logins cannot grow the daemon's memory.
	maxEntries = 64
)

// Sessions holds one-time login codes and browser sessions, in memory only:
// a daemon restart logs every browser out.
type Sessions struct {
	now func() time.Time
	// cookie is the session cookie's name. It carries the listener's port:
	// browsers share cookies across ports, so two daemons on one host must
	// not overwrite each other's.
	cookie string

	mu       sync.Mutex
	codes    map[string]time.Time // code -> expiry
	sessions map[string]session   // id -> session
}

type session struct {
	csrf    string
	expires time.Time
}

// NewSessions makes an empty store for the listener on port; now is the
// clock (time.Now).
func NewSessions(now func() time.Time, port string) *Sessions {
	if now == nil {
		now = time.Now
	}
	return &Sessions{now: now, cookie: "flinkgo_session_" + port, codes: map[string]time.Time{}, sessions: map[string]session{}}
}

// CookieName is the session cookie's name.
func (s *Sessions) CookieName() string { return s.cookie }

// NewLoginCode mints a code for one login link.
func (s *Sessions) NewLoginCode() (code string, expires time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	code, expires = randomHex(), now.Add(LoginCodeTTL)
	s.codes[code] = expires
	evictOldest(s.codes, func(t time.Time) time.Time { return t })
	return code, expires
}

// redeem spends a login code and opens a session.
func (s *Sessions) redeem(code string) (id, csrf string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	if _, ok := s.codes[code]; !ok || code == "" {
		return "", "", false
	}
	delete(s.codes, code) // one time only
	id, csrf = randomHex(), randomHex()
	s.sessions[id] = session{csrf: csrf, expires: now.Add(SessionTTL)}
	evictOldest(s.sessions, func(x session) time.Time { return x.expires })
	return id, csrf, true
}

// Authorized reports whether a request carries a live session cookie and
// echoes that session's CSRF token in CSRFHeader. The cookie alone is not
// enough: other servers on this host receive it too.
func (s *Sessions) Authorized(r *http.Request) bool {
	c, err := r.Cookie(s.cookie)
	got := r.Header.Get(CSRFHeader)
	if err != nil || got == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.sessions[c.Value]
	return ok && s.now().Before(x.expires) && subtle.ConstantTimeCompare([]byte(got), []byte(x.csrf)) == 1
}

// HasCookie reports whether a request carries a session cookie (live or
// not): the daemon then judges it as a browser request.
func (s *Sessions) HasCookie(r *http.Request) bool {
	_, err := r.Cookie(s.cookie)
	return err == nil
}

// Login handles GET /ui/login?code=…: it spends the code, sets the session
// cookie, and answers a page that keeps the CSRF token in the origin's
// localStorage and then replaces itself with the dashboard (so the spent
// code does not stay in the history).
func (s *Sessions) Login(w http.ResponseWriter, r *http.Request) {
	id, csrf, ok := s.redeem(r.URL.Query().Get("code"))
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("This login link is invalid, expired or already used.\n" +
			"Run `flinkgo ui` on the daemon's machine for a new one.\n"))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// csrf is hex: nothing to escape.
	_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8">` +
		`<meta name="flinkgo-csrf" content="` + csrf + `"><title>flinkgo: logging in</title></head>` +
		`<body><p id="status">Logging in…</p><script src="/assets/login.js"></script></body></html>`))
}

// Logout ends the request's session and clears its cookie.
func (s *Sessions) Logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(s.cookie); err == nil {
		s.mu.Lock()
		delete(s.sessions, c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

func (s *Sessions) expire(now time.Time) {
	for k, t := range s.codes {
		if !now.Before(t) {
			delete(s.codes, k)
		}
	}
	for k, x := range s.sessions {
		if !now.Before(x.expires) {
			delete(s.sessions, k)
		}
	}
}

func evictOldest[V any](m map[string]V, expiry func(V) time.Time) {
	for len(m) > maxEntries {
		var oldest string
		for k, v := range m {
			if oldest == "" || expiry(v).Before(expiry(m[oldest])) {
				oldest = k
			}
		}
		delete(m, oldest)
	}
}

func randomHex() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
