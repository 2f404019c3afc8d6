package postgrescdc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// pollIDs polls s until n records (after.id) arrived.
func pollIDs(t *testing.T, s *source, n int) []int {
	t.Helper()
	var ids []int
	end := time.Now().Add(30 * time.Second)
	for len(ids) < n {
		require.True(t, time.Now().Before(end), "%d of %d records", len(ids), n)
		b := &runtime.Batch{Records: make([]runtime.Record, 0, min(100, n-len(ids)))}
		require.NoError(t, s.Poll(b))
		for _, r := range b.Records {
			var e struct {
				After struct{ ID int } `json:"after"`
			}
			require.NoError(t, json.Unmarshal(r.Value, &e))
			require.Equal(t, fmt.Sprintf(`{"id":%d}`, e.After.ID), string(r.Key))
			ids = append(ids, e.After.ID)
		}
	}
	return ids
}

func open(t *testing.T, cfg *config, st *state.OperatorState) (*source, error) {
	s := &source{cfg: cfg}
	err := s.Open(runtime.NewContext(runtime.ContextOptions{UID: "in", State: st, Restored: st != nil}))
	t.Cleanup(func() { _ = s.Close() })
	return s, err
}

// TestRestoreInsideTransaction: a checkpoint taken in the middle of a
// transaction's changes names how many were emitted; the source restored
// from it emits exactly the rest. A restore from a checkpoint older than
// the one confirmed to the server is refused, saying what to do.
func TestRestoreInsideTransaction(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, srv.URL(""))
	require.NoError(t, err)
	defer db.Close(ctx)
	_, err = db.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY)")
	require.NoError(t, err)
	cfg := &config{url: srv.URL(""), tables: []tableName{{"public", "t"}}, slot: "restore_test", publication: "restore_test"}

	s, err := open(t, cfg, nil)
	require.NoError(t, err)
	_, err = db.Exec(ctx, "INSERT INTO t SELECT generate_series(1, 1000)")
	require.NoError(t, err)
	first := pollIDs(t, s, 300)
	require.NoError(t, s.SnapshotState(1))
	cp1 := s.ctx.OperatorState()
	require.NotZero(t, s.pos.txn, "the checkpoint is inside the transaction")
	require.Equal(t, uint64(300), s.pos.count)
	pollIDs(t, s, 100) // emitted after the barrier: lost with the failure
	require.NoError(t, s.Close())

	s, err = open(t, cfg, cp1)
	require.NoError(t, err)
	rest := pollIDs(t, s, 700)
	for i, id := range append(first, rest...) {
		require.Equal(t, i+1, id)
	}
	b := runtime.NewBatch()
	require.NoError(t, s.Poll(b))
	require.Empty(t, b.Records, "nothing more")

	// A later checkpoint completes: its position is confirmed to the
	// server, which then refuses an older one.
	_, err = db.Exec(ctx, "INSERT INTO t VALUES (1001)")
	require.NoError(t, err)
	pollIDs(t, s, 1)
	require.NoError(t, s.SnapshotState(2))
	require.NoError(t, s.NotifyCheckpointComplete(2))
	confirmed := s.pos.lsn
	require.Eventually(t, func() bool {
		var lsn string
		require.NoError(t, db.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'restore_test'").Scan(&lsn))
		return lsn == confirmed.String()
	}, 10*time.Second, 20*time.Millisecond, "the slot confirmed at checkpoint 2's %s", confirmed)
	require.NoError(t, s.Close())
	old := state.NewOperatorState()
	old.Set(stateList, state.Union, [][]byte{position{slot: "restore_test", phase: phaseStreaming, lsn: 1}.encode()})
	_, err = open(t, cfg, old)
	require.ErrorContains(t, err, "is older than replication slot restore_test's confirmed position")
	require.ErrorContains(t, err, "Restore the latest checkpoint")
}

// TestRestoreInsideSnapshot: a checkpoint taken during the snapshot before
// any row was emitted takes the snapshot again; one taken after some rows
// were emitted is refused, saying why and what to do.
func TestRestoreInsideSnapshot(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	ctx := context.Background()
	db, err := pgx.Connect(ctx, srv.URL(""))
	require.NoError(t, err)
	defer db.Close(ctx)
	_, err = db.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 250)")
	require.NoError(t, err)
	cfg := &config{url: srv.URL(""), tables: []tableName{{"public", "t"}}, slot: "snap_test", publication: "snap_test", snapshot: true}
	st := func(count uint64) *state.OperatorState {
		s := state.NewOperatorState()
		s.Set(stateList, state.Union, [][]byte{position{slot: "snap_test", phase: phaseSnapshot, lsn: 1, count: count}.encode()})
		return s
	}
	s, err := open(t, cfg, st(0))
	require.NoError(t, err)
	ids := pollIDs(t, s, 250) // polls of 100, 100 and 50
	slices.Sort(ids)
	for i, id := range ids {
		require.Equal(t, i+1, id)
	}
	require.Equal(t, byte(phaseStreaming), s.pos.phase, "streaming from the poll that emitted the last rows")
	require.NoError(t, s.Close())

	_, err = open(t, cfg, st(2))
	require.ErrorContains(t, err, "taken during the initial snapshot (2 rows of it emitted)")
	require.ErrorContains(t, err, "Start the job again without this checkpoint")
}
