package pgserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/pgtest"
)

// The server the connectors' tests get: logical WAL and prepared
// transactions on, and it survives a crash (Kill, Start) with a prepared
// transaction intact.
func TestServerIsWhatTheConnectorsNeed(t *testing.T) {
	srv := pgtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.URL(""))
	require.NoError(t, err)
	var wal, prepared string
	require.NoError(t, conn.QueryRow(ctx, "SHOW wal_level").Scan(&wal))
	require.NoError(t, conn.QueryRow(ctx, "SHOW max_prepared_transactions").Scan(&prepared))
	require.Equal(t, "logical", wal)
	require.NotEqual(t, "0", prepared)

	_, err = conn.Exec(ctx, "CREATE TABLE t (id bigint primary key)")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "BEGIN; INSERT INTO t VALUES (1); PREPARE TRANSACTION 'gid-1'")
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))

	require.NoError(t, srv.Kill())
	require.NoError(t, srv.Start())
	conn, err = pgx.Connect(ctx, srv.URL(""))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'gid-1'").Scan(&n))
	require.Equal(t, 1, n, "the prepared transaction survives the crash")
	_, err = conn.Exec(ctx, "COMMIT PREPARED 'gid-1'")
	require.NoError(t, err)
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n))
	require.Equal(t, 1, n)
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
