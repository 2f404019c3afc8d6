// Package s3test starts a real S3 server (versitygw, see s3server) for
// tests. Without the binary a test is skipped, unless FLINKGO_REQUIRE_S3
// is set (as .ci/run does): then it fails, so CI never passes by skipping.
package s3test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"testing"

	"github.com/flinkgo/flinkgo/internal/dev/s3server"
	"github.com/flinkgo/flinkgo/pkg/vfs"
	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// Start starts a server for t, stopped when t ends.
func Start(t testing.TB) *s3server.Server {
	t.Helper()
	if _, err := s3server.Binary(); err != nil {
		if os.Getenv("FLINKGO_REQUIRE_S3") != "" {
			t.Fatalf("%v; FLINKGO_REQUIRE_S3 is set, so S3 tests may not be skipped", err)
		}
		t.Skipf("%v (set FLINKGO_REQUIRE_S3=1 to fail instead)", err)
	}
	srv, err := s3server.Start(s3server.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

var buckets atomic.Int64

// Bucket creates a fresh bucket on srv and returns its name.
func Bucket(t testing.TB, srv *s3server.Server) string {
	t.Helper()
	st := Store(t, srv, s3store.Options{})
	name := fmt.Sprintf("test-%d-%d", os.Getpid(), buckets.Add(1))
	if err := st.CreateBucket(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	return name
}

// Store returns a client of srv (o may carry an HTTP client or retry limits).
func Store(t testing.TB, srv *s3server.Server, o s3store.Options) *s3store.Store {
	t.Helper()
	if o.HTTPClient == nil {
		// Its own connections, closed when t ends, so goleak sees no
		// keep-alive goroutines of a shared transport.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		o.HTTPClient = &http.Client{Transport: tr}
	}
	st, err := srv.Store(o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// FS is an ObjectFS on srv.
func FS(t testing.TB, srv *s3server.Server, o s3store.Options) *vfs.ObjectFS {
	return vfs.NewObjectFS(Store(t, srv, o), vfs.ObjectOptions{})
}
