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
	// CookieName holds the browser's session id.
	CookieName = "flinkgo_session"
	// CSRFHeader must echo the session's anti-CSRF token on every request
	// that changes state. Another origin can neither read the token nor
	// send a custom header without a CORS preflight, which the daemon
	// never grants.
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

	mu       sync.Mutex
	codes    map[string]time.Time // code -> expiry
	sessions map[string]session   // id -> session
}

type session struct {
	csrf    string
	expires time.Time
}

// NewSessions makes an empty store; now is the clock (time.Now).
func NewSessions(now func() time.Time) *Sessions {
	if now == nil {
		now = time.Now
	}
	return &Sessions{now: now, codes: map[string]time.Time{}, sessions: map[string]session{}}
}

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
func (s *Sessions) redeem(code string) (id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	if _, ok := s.codes[code]; !ok || code == "" {
		return "", false
	}
	delete(s.codes, code) // one time only
	id = randomHex()
	s.sessions[id] = session{csrf: randomHex(), expires: now.Add(SessionTTL)}
	evictOldest(s.sessions, func(x session) time.Time { return x.expires })
	return id, true
}

// CSRF returns the anti-CSRF token of the request's session, if it has a
// live one.
func (s *Sessions) CSRF(r *http.Request) (string, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.sessions[c.Value]
	if !ok || !s.now().Before(x.expires) {
		return "", false
	}
	return x.csrf, true
}

// Authorized reports whether a request carries a live session cookie and
// echoes that session's CSRF token in CSRFHeader.
func (s *Sessions) Authorized(r *http.Request) bool {
	csrf, ok := s.CSRF(r)
	got := r.Header.Get(CSRFHeader)
	return ok && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(csrf)) == 1
}

// Login handles GET /ui/login?code=…: it spends the code, sets the session
// cookie and sends the browser to the dashboard (so the code does not stay
// in the address bar or history as a working credential).
func (s *Sessions) Login(w http.ResponseWriter, r *http.Request) {
	id, ok := s.redeem(r.URL.Query().Get("code"))
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("This login link is invalid, expired or already used.\n" +
			"Run `flinkgo ui` on the daemon's machine for a new one.\n"))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// Logout ends the request's session and clears its cookie.
func (s *Sessions) Logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		s.mu.Lock()
		delete(s.sessions, c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true,
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
