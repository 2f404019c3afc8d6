package postgres_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/pgserver"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/connectors/postgres"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testTypes are the operator types the tests' specs use.
var testTypes = slices.Concat(postgres.Definitions(), datagen.Definitions())

const waitFor = 60 * time.Second

// shared is one server for the tests that do not stop theirs; each test
// gets a database of its own on it.
var shared struct {
	once sync.Once
	srv  *pgserver.Server
	err  error
	n    atomic.Int64
}

// database creates a new database on the shared server and returns its URL.
func database(t testing.TB) string {
	t.Helper()
	if _, err := pgserver.Binary(); err != nil {
		pgtest.Start(t) // skips, or fails under FLINKGO_REQUIRE_POSTGRES
	}
	shared.once.Do(func() { shared.srv, shared.err = pgserver.Start(pgserver.Config{}) })
	require.NoError(t, shared.err)
	name := fmt.Sprintf("t%d", shared.n.Add(1))
	exec(t, shared.srv.URL(""), "CREATE DATABASE "+name)
	return shared.srv.URL(name)
}

// exec runs statements on a new connection.
func exec(t testing.TB, url string, sqls ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, s := range sqls {
		_, err := conn.Exec(ctx, s)
		require.NoError(t, err, s)
	}
}

// query returns the int64 columns of the single row of sql.
func query(t testing.TB, url, sql string, args ...any) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql, args...)
	require.NoError(t, err)
	defer rows.Close()
	require.True(t, rows.Next(), "%s: no row (%v)", sql, rows.Err())
	vals, err := rows.Values()
	require.NoError(t, err)
	out := make([]int64, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case int64:
			out[i] = x
		case int32:
			out[i] = int64(x)
		case nil:
		default:
			t.Fatalf("%s: column %d is %T", sql, i, v)
		}
	}
	return out
}

// onceEach reports the rows of table t's idx column against 1..n: how
// many are missing and how many are extra copies.
func onceEach(t testing.TB, url, table string, n int64) (lost, dup int64) {
	t.Helper()
	r := query(t, url, fmt.Sprintf("SELECT count(*), count(DISTINCT idx), count(*) FILTER (WHERE idx < 1 OR idx > %d) FROM %s", n, table))
	total, distinct, outside := r[0], r[1], r[2]
	return n - (distinct - outside), total - distinct + outside
}

func operator(t testing.TB, j *engine.Job, uid string) api.OperatorInfo {
	t.Helper()
	for _, op := range j.Info().Operators {
		if op.UID == uid {
			return op
		}
	}
	t.Fatalf("no operator %q", uid)
	return api.OperatorInfo{}
}

// finished waits for a bounded job to finish.
func finished(t testing.TB, j *engine.Job) {
	t.Helper()
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
}

// failed waits for the job to fail and returns its error.
func failed(t testing.TB, j *engine.Job) string {
	t.Helper()
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	return j.Info().Error
}
