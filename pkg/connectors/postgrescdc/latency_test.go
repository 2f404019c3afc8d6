package postgrescdc_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// arrivals records when each id reached a receiver.
type arrivals struct {
	mu sync.Mutex
	at map[int]time.Time
}

func (a *arrivals) add(id int, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.at[id]; !ok {
		a.at[id] = t
	}
}

func (a *arrivals) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

var jobArrivals = &arrivals{at: map[int]time.Time{}}

// idOf reads after.id from an envelope (the first "id": of after).
func idOf(v []byte) int {
	i := bytes.Index(v, []byte(`"after":{"id":`))
	if i < 0 {
		return -1
	}
	v = v[i+len(`"after":{"id":`):]
	j := bytes.IndexAny(v, ",}")
	n, _ := strconv.Atoi(string(v[:j]))
	return n
}

// latencySink notes the arrival time of each record (a sink that does
// nothing else, so the figure is the source's and the engine's).
type latencySink struct{}

func (latencySink) Open(*runtime.Context) error { return nil }
func (latencySink) Close() error                { return nil }
func (latencySink) Process(b *runtime.Batch, _ runtime.Output) error {
	now := time.Now()
	for _, r := range b.Records {
		jobArrivals.add(idOf(r.Value), now)
	}
	return nil
}

var latencyDef = runtime.Definition{Type: "test-latency", Kind: api.KindSink, Doc: "test only: arrival times",
	Configure: func(*runtime.ConfigContext) *runtime.Plan {
		return &runtime.Plan{InputValues: runtime.ValuesDropped, NewOperator: func() runtime.Operator { return latencySink{} }}
	}}

// plainLoop is the baseline: a pglogrepl loop on a slot of its own, as a
// hand-written consumer would be, noting when each insert arrives.
func plainLoop(ctx context.Context, url, slot, pub string, got *arrivals, ready chan<- error) error {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return err
	}
	cfg.RuntimeParams["replication"] = "database"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{Temporary: true, Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return err
	}
	lsn, _ := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err := pglogrepl.StartReplication(ctx, conn, slot, lsn, pglogrepl.StartReplicationOptions{Mode: pglogrepl.LogicalReplication,
		PluginArgs: []string{"proto_version '1'", "publication_names '" + pub + "'"}}); err != nil {
		return err
	}
	ready <- nil
	for ctx.Err() == nil {
		_ = conn.Conn().SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		msg, err := conn.ReceiveMessage(context.Background())
		if err != nil {
			if pgconn.Timeout(err) {
				continue
			}
			return err
		}
		cd, ok := msg.(*pgproto3.CopyData)
		if !ok || cd.Data[0] != pglogrepl.XLogDataByteID {
			continue
		}
		x, err := pglogrepl.ParseXLogData(cd.Data[1:])
		if err != nil {
			return err
		}
		m, err := pglogrepl.Parse(x.WALData)
		if err != nil {
			return err
		}
		if ins, ok := m.(*pglogrepl.InsertMessage); ok {
			id, _ := strconv.Atoi(string(ins.Tuple.Columns[0].Data))
			got.add(id, time.Now())
		}
	}
	return nil
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

func latencies(t testing.TB, committed map[int]time.Time, got *arrivals) []time.Duration {
	got.mu.Lock()
	defer got.mu.Unlock()
	out := make([]time.Duration, 0, len(committed))
	for id, c := range committed {
		a, ok := got.at[id]
		require.True(t, ok, "id %d never arrived", id)
		out = append(out, a.Sub(c))
	}
	slices.Sort(out)
	return out
}

// BenchmarkCommitToSinkLatency is the CDC figure: the time from a
// transaction's COMMIT (taken just before it is sent) to its record in a
// sink of a running job, at 5,000 changes/s (500 transactions of 10
// inserts a second) for 4s, against a plain pglogrepl loop on a slot of
// its own receiving the same changes in the same run. The job
// checkpoints every second (the slot is confirmed then; it adds no
// latency). The writer's commits flush the WAL (synchronous_commit = on).
func BenchmarkCommitToSinkLatency(b *testing.B) {
	const rate, perTxn, seconds = 5000, 10, 4
	srv := pgtest.Start(b)
	db := connect(b, srv.URL(""))
	mustExec(b, db, "CREATE TABLE lat (id int PRIMARY KEY, payload text)")
	mustExec(b, db, "CREATE PUBLICATION lat_pub FOR TABLE lat")
	// The test server runs with synchronous_commit = off, where WAL (and
	// so what a walsender may decode) is flushed every wal_writer_delay
	// (200ms): that delay would be the whole figure. A commit here
	// flushes, as on a production server.
	mustExec(b, db, "SET synchronous_commit = on")
	b.ResetTimer()
	for range b.N {
		mustExec(b, db, "TRUNCATE lat")
		jobArrivals = &arrivals{at: map[int]time.Time{}}
		j := runtimetest.Start(b, fmt.Sprintf(`
name: latency
checkpointing: {interval: 1s}
operators:
  - {uid: in, type: postgres-cdc, url: "%s", tables: [lat], publication: lat_pub, slot: lat_job, snapshot: never}
  - {uid: out, from: [in], type: test-latency}
`, srv.URL("")), runtimetest.Options{Types: append([]runtime.Definition{latencyDef}, testTypes...), CheckpointsDir: b.TempDir()})
		waitSlotActive(b, db, "lat_job")
		plain := &arrivals{at: map[int]time.Time{}}
		ctx, cancel := context.WithCancel(context.Background())
		ready, done := make(chan error, 1), make(chan error, 1)
		go func() {
			err := plainLoop(ctx, srv.URL(""), "lat_plain", "lat_pub", plain, ready)
			ready <- err
			done <- err
		}()
		require.NoError(b, <-ready)

		committed := map[int]time.Time{}
		start := time.Now()
		id := 0
		for n := 0; n < rate*seconds/perTxn; n++ {
			batch := &pgx.Batch{}
			for range perTxn {
				id++
				batch.Queue("INSERT INTO lat VALUES ($1, 'some payload of a change')", id)
			}
			tx, err := db.Begin(context.Background())
			require.NoError(b, err)
			require.NoError(b, tx.SendBatch(context.Background(), batch).Close())
			at := time.Now()
			require.NoError(b, tx.Commit(context.Background()))
			for k := id - perTxn + 1; k <= id; k++ {
				committed[k] = at
			}
			if d := time.Until(start.Add(time.Duration(n+1) * time.Second * perTxn / rate)); d > 0 {
				time.Sleep(d)
			}
		}
		achieved := float64(id) / time.Since(start).Seconds()
		runtimetest.WaitUntil(b, waitFor, "every change in the sink", func() bool { return jobArrivals.len() >= id && plain.len() >= id })
		cancel()
		require.NoError(b, <-done)
		runtimetest.Cancel(b, waitFor, j)
		mustExec(b, db, "SELECT pg_drop_replication_slot('lat_job')")

		job, base := latencies(b, committed, jobArrivals), latencies(b, committed, plain)
		jp50, jp99, bp50, bp99 := percentile(job, 0.5), percentile(job, 0.99), percentile(base, 0.5), percentile(base, 0.99)
		b.Logf("%d changes at %.0f/s: commit → sink p50 %v p99 %v; plain pglogrepl loop p50 %v p99 %v; ratio p50 %.2f× p99 %.2f×",
			id, achieved, jp50, jp99, bp50, bp99, float64(jp50)/float64(bp50), float64(jp99)/float64(bp99))
		b.ReportMetric(float64(jp50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(jp99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(bp50.Microseconds())/1000, "plain-p50-ms")
		b.ReportMetric(float64(bp99.Microseconds())/1000, "plain-p99-ms")
		b.ReportMetric(achieved, "changes/s")
	}
}
