package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// TestPostgresCDCSurvivesKillDaemon: a postgres-cdc source (snapshot, then
// inserts and updates while the job runs) into the file sink, the daemon
// killed with SIGKILL while changes flow and started again: it resumes the
// job from its last checkpoint, at the slot position that checkpoint
// holds, and the finished files hold every change exactly once.
func TestPostgresCDCSurvivesKillDaemon(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, srv.URL(""))
	require.NoError(t, err)
	defer db.Close(ctx)
	_, err = db.Exec(ctx, "CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL); INSERT INTO items SELECT g, g FROM generate_series(1, 100) g")
	require.NoError(t, err)

	e := newEnv(t)
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	id := e.mustRun("run", e.writeSpec("cdc.yaml", fmt.Sprintf(`
name: cdc-to-files
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 100ms}
operators:
  - {uid: in, type: postgres-cdc, url: "%s", tables: [items]}
  - {uid: out, type: file, from: [in], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, srv.URL(""), out)))

	// Changes: v 101.. (an insert of a new row, every third an update of
	// an earlier one), each v once, a few hundred a second.
	v := 100
	write := func(n int) {
		for i := 0; i < n; i++ {
			v++
			if v%3 == 0 {
				_, err = db.Exec(ctx, "UPDATE items SET v = $1 WHERE id = $2", v, v%100+1)
			} else {
				_, err = db.Exec(ctx, "INSERT INTO items VALUES ($1, $1)", v)
			}
			require.NoError(t, err)
			time.Sleep(time.Millisecond)
		}
	}
	write(500)
	deadline := time.Now().Add(30 * time.Second)
	for info := e.info(id); info.Checkpoints == nil || info.Checkpoints.Completed < 3; info = e.info(id) {
		require.True(t, time.Now().Before(deadline), "no checkpoints: %+v", info)
		time.Sleep(50 * time.Millisecond)
	}
	e.killDaemon()
	write(250) // while no daemon runs: the slot keeps them
	e.startDaemon()
	write(250)

	waitLines := func() {
		deadline := time.Now().Add(60 * time.Second)
		for len(runtimetest.FinishedLines(t, out)) < v {
			require.True(t, time.Now().Before(deadline), "%d of %d changes in finished files\n%s", len(runtimetest.FinishedLines(t, out)), v, e.stderr.String())
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitLines()
	e.mustRun("stop", id, "-p", filepath.Join(e.home, "savepoints"))
	e.waitState(id, api.StateFinished, 30*time.Second)

	seen := map[int]int{}
	for _, l := range runtimetest.FinishedLines(t, out) {
		var r struct {
			After struct{ V int } `json:"after"`
			Op    string          `json:"op"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		seen[r.After.V]++
	}
	for i := 1; i <= v; i++ {
		require.Equal(t, 1, seen[i], "change v=%d", i)
	}
	require.Len(t, seen, v)
	t.Logf("%d changes (100 snapshot rows) exactly once across kill -9 of the daemon", v)
}
