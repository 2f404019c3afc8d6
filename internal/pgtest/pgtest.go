// Package pgtest starts a real PostgreSQL server (pgserver) for tests.
// Without an installed PostgreSQL a test is skipped, unless
// FLINKGO_REQUIRE_POSTGRES is set (as .ci/run does): then it fails, so CI
// never passes by skipping.
package pgtest

import (
	"os"
	"testing"

	"github.com/flinkgo/flinkgo/internal/dev/pgserver"
)

// Start starts a server for t, stopped and removed when t ends.
func Start(t testing.TB) *pgserver.Server {
	t.Helper()
	return StartConfig(t, pgserver.Config{})
}

// StartConfig starts a server configured by c for t (Settings lines come
// last in postgresql.conf, so they override the defaults).
func StartConfig(t testing.TB, c pgserver.Config) *pgserver.Server {
	t.Helper()
	if _, err := pgserver.Binary(); err != nil {
		if os.Getenv("FLINKGO_REQUIRE_POSTGRES") != "" {
			t.Fatalf("%v; FLINKGO_REQUIRE_POSTGRES is set, so database tests may not be skipped", err)
		}
		t.Skipf("%v (set FLINKGO_REQUIRE_POSTGRES=1 to fail instead)", err)
	}
	srv, err := pgserver.Start(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}
