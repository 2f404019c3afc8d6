package dashboard

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSessionsOneTimeCodesAndExpiry(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewSessions(func() time.Time { return now }, "8081")
	code, exp := s.NewLoginCode()
	require.Equal(t, now.Add(LoginCodeTTL), exp)

	login := func(code string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.Login(w, httptest.NewRequest(http.MethodGet, "/ui/login?code="+code, nil))
		return w
	}
	w := login(code)
	require.Equal(t, http.StatusOK, w.Code)
	cookie := w.Result().Cookies()[0]
	require.Equal(t, "flinkgo_session_8081", cookie.Name)
	require.True(t, cookie.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cookie.SameSite)
	csrf := regexp.MustCompile(`content="([0-9a-f]+)"`).FindStringSubmatch(w.Body.String())[1]
	require.Equal(t, http.StatusForbidden, login(code).Code, "one time only")
	require.Equal(t, http.StatusForbidden, login("").Code)

	req := httptest.NewRequest(http.MethodPost, "/v1/x", nil)
	req.AddCookie(cookie)
	require.True(t, s.HasCookie(req))
	require.False(t, s.Authorized(req), "no CSRF header")
	req.Header.Set(CSRFHeader, csrf)
	require.True(t, s.Authorized(req))

	now = now.Add(SessionTTL)
	require.False(t, s.Authorized(req), "the session expired")

	// An unused code expires.
	code, _ = s.NewLoginCode()
	now = now.Add(LoginCodeTTL)
	require.Equal(t, http.StatusForbidden, login(code).Code)
}

func TestSessionsAreBounded(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewSessions(func() time.Time { now = now.Add(time.Millisecond); return now }, "8081")
	first, _ := s.NewLoginCode()
	for range 3 * maxEntries {
		s.NewLoginCode()
	}
	require.Len(t, s.codes, maxEntries)
	_, _, ok := s.redeem(first)
	require.False(t, ok, "the oldest code was evicted")
	for range 3 * maxEntries {
		code, _ := s.NewLoginCode()
		_, _, ok := s.redeem(code)
		require.True(t, ok)
	}
	require.Len(t, s.sessions, maxEntries)
}

func TestHostPolicy(t *testing.T) {
	cases := []struct {
		listen  string
		allowed []string
		host    string
		ok      bool
	}{
		{"127.0.0.1:8081", nil, "127.0.0.1:8081", true},
		{"127.0.0.1:8081", nil, "localhost:8081", true},
		{"127.0.0.1:8081", nil, "[::1]:8081", true},
		{"127.0.0.1:8081", nil, "127.0.0.1:8082", false},
		{"127.0.0.1:8081", nil, "127.0.0.1", false},
		{"127.0.0.1:8081", nil, "attacker.example:8081", false},
		{"127.0.0.1:8081", nil, "localhost.attacker.example:8081", false},
		{"127.0.0.1:8081", nil, "10.0.0.5:8081", false},
		{"127.0.0.1:8081", []string{"box.internal"}, "box.internal:8081", true},
		{"127.0.0.1:8081", []string{"Box.Internal"}, "BOX.internal.:8081", true},
		{"10.0.0.5:8081", nil, "10.0.0.5:8081", true},
		{"10.0.0.5:8081", nil, "localhost:8081", false},
		{"0.0.0.0:8081", nil, "192.168.1.9:8081", true},
		{"0.0.0.0:8081", nil, "localhost:8081", true},
		{"0.0.0.0:8081", nil, "myhost:8081", false},
		{"[::]:8081", nil, "[fe80::1]:8081", true},
	}
	for _, c := range cases {
		p, err := NewHostPolicy(c.listen, c.allowed)
		require.NoError(t, err)
		require.Equal(t, c.ok, p.Allowed(c.host), "listen %s allowed %v host %s", c.listen, c.allowed, c.host)
	}
}

// The page loads nothing from outside the daemon: no absolute URL, no
// protocol-relative URL, no inline script or style (which the CSP would
// block anyway), no string-to-code evaluation.
func TestAssetsAreSelfContained(t *testing.T) {
	var names []string
	require.NoError(t, fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	}))
	require.Contains(t, names, "assets/index.html")
	require.Contains(t, names, "assets/app.js")
	require.Contains(t, names, "assets/style.css")
	require.Contains(t, names, "assets/login.js")
	require.Contains(t, names, "assets/graph.js")
	require.Contains(t, names, "assets/charts.js")
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(\s*['"]?(https?:|//)`)
	for _, n := range names {
		data, err := assets.ReadFile(n)
		require.NoError(t, err)
		// The SVG namespace is a name for createElementNS, never fetched.
		text := strings.ReplaceAll(string(data), "'http://www.w3.org/2000/svg'", "")
		for _, m := range external.FindAllString(text, -1) {
			t.Errorf("%s refers to something outside the daemon: %q", n, m)
		}
		switch {
		case strings.HasSuffix(n, ".html"):
			require.NotRegexp(t, `<script(?:\s[^>]*)?>\s*[^<\s]`, text, "%s: inline script", n)
			require.NotRegexp(t, `(?i)\son[a-z]+\s*=`, text, "%s: inline event handler", n)
			require.NotRegexp(t, `(?i)\sstyle\s*=`, text, "%s: inline style", n)
		case strings.HasSuffix(n, ".js"):
			require.NotRegexp(t, `\beval\(|new Function\(|\.innerHTML\s*=|document\.write\(`, text, "%s", n)
		}
	}
}

func TestSecureHeaders(t *testing.T) {
	h := SecureHeaders(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, path := range []string{"/", "/v1/overview"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, "DENY", w.Header().Get("X-Frame-Options"))
		require.Contains(t, w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'")
		require.Contains(t, w.Header().Get("Content-Security-Policy"), "connect-src 'self'")
	}
}
