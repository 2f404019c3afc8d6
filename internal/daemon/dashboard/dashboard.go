// Package dashboard serves flinkgo's web UI: the embedded pages, the
// browser sessions that may change state (one-time login links, an HttpOnly
// SameSite=Strict cookie, an anti-CSRF token), and the headers and Host
// check that keep other origins out. The JSON it reads is the daemon's
// /v1 API; this package knows nothing about jobs.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Assets serves the single page at "/" and its files under "/assets/".
// Everything the page needs is embedded: it makes no request that leaves
// the daemon's origin.
func Assets() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/" || r.URL.Path == "/index.html":
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeFileFS(w, r, sub, "index.html")
		default:
			// /assets/app.js → app.js
			r2 := r.Clone(r.Context())
			r2.URL.Path = r.URL.Path[len("/assets"):]
			w.Header().Set("Cache-Control", "no-cache")
			files.ServeHTTP(w, r2)
		}
	})
}
