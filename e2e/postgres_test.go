package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// TestPostgresSinkAcrossKill9: the real binary writes into PostgreSQL
// with prepared transactions per checkpoint; the daemon is killed (kill
// -9) while it writes, with transactions prepared and not yet committed,
// and started again: the job resumes from its checkpoint, commits what
// the checkpoint names, rolls back the rest, and every row is in the
// table once, counted by SQL.
func TestPostgresSinkAcrossKill9(t *testing.T) {
	parallel(t)
	srv := pgtest.Start(t)
	url := srv.URL("")
	pg := func(sql string) int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		var n int64
		require.NoError(t, conn.QueryRow(ctx, sql).Scan(&n), sql)
		return n
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE TABLE t (idx bigint)")
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))

	e := newEnv(t)
	e.startDaemon()
	const n = 8000
	id := e.mustRun("run", e.writeSpec("pg.yaml", fmt.Sprintf(`
name: pg-kill
parallelism: 2
checkpointing: {interval: 200ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 1000}
  - {uid: out, type: postgres, from: [gen], url: %q, table: t}
`, n, url)))
	deadline := time.Now().Add(30 * time.Second)
	for pg("SELECT count(*) FROM t") == 0 || pg("SELECT count(*) FROM pg_prepared_xacts") == 0 {
		require.True(t, time.Now().Before(deadline), "no rows committed and prepared: %+v", e.info(id))
		time.Sleep(20 * time.Millisecond)
	}
	e.killDaemon()
	require.Less(t, pg("SELECT count(*) FROM t"), int64(n))
	e.startDaemon()
	e.waitState(id, api.StateFinished, 60*time.Second)
	require.Equal(t, int64(n), pg("SELECT count(*) FROM t"), "rows")
	require.Equal(t, int64(n), pg(fmt.Sprintf("SELECT count(DISTINCT idx) FROM t WHERE idx BETWEEN 1 AND %d", n)), "distinct rows")
	require.Zero(t, pg("SELECT count(*) FROM pg_prepared_xacts"), "no prepared transaction left behind")
}
