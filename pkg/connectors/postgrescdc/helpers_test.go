package postgrescdc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/pgserver"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/pgtest"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// shared is one server for the tests that do not stop it: each gets a
// database of its own (slots are the cluster's: every test names its own).
var shared struct {
	sync.Mutex
	srv *pgserver.Server
	err error
	n   int
}

// database returns the URL of a new database on the shared server
// (skipping as pgtest does without PostgreSQL).
func database(t testing.TB) string {
	t.Helper()
	if _, err := pgserver.Binary(); err != nil {
		pgtest.Start(t) // skips, or fails under FLINKGO_REQUIRE_POSTGRES
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = pgserver.Start(pgserver.Config{})
	}
	require.NoError(t, shared.err)
	shared.n++
	name := fmt.Sprintf("t%d", shared.n)
	c, err := pgx.Connect(context.Background(), shared.srv.URL(""))
	require.NoError(t, err)
	defer c.Close(context.Background())
	_, err = c.Exec(context.Background(), "CREATE DATABASE "+name)
	require.NoError(t, err)
	// Slots belong to the cluster: drop the test's, so a test run again
	// (-count) can create its slot anew.
	url := shared.srv.URL("")
	srv := shared.srv
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", srv.Log())
		}
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Errorf("drop the slots of %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, _ = c.Exec(context.Background(), "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL", name)
			_, err = c.Exec(context.Background(), "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1", name)
			if err == nil || time.Now().After(end) {
				break
			}
		}
		if err != nil {
			t.Errorf("drop the slots of %s: %v", name, err)
		}
	})
	return shared.srv.URL(name)
}

const waitFor = 30 * time.Second

// testTypes are the operator types the tests' specs use.
var testTypes = all.Definitions()

var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), testTypes)...)

// connect opens a plain connection for writing and observing.
func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func mustExec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	_, err := c.Exec(context.Background(), sql, args...)
	require.NoError(t, err, sql)
}

// envelope is the part of a record the tests read.
type envelope struct {
	Before map[string]any `json:"before"`
	After  map[string]any `json:"after"`
	Op     string         `json:"op"`
	Source struct {
		LSN      uint64 `json:"lsn"`
		Table    string `json:"table"`
		Schema   string `json:"schema"`
		TsMs     int64  `json:"ts_ms"`
		TxID     *int64 `json:"txId"`
		Snapshot string `json:"snapshot"`
	} `json:"source"`
	TsMs int64 `json:"ts_ms"`
}

func parse(t testing.TB, line string) envelope {
	t.Helper()
	var e envelope
	require.NoError(t, json.Unmarshal([]byte(line), &e), line)
	return e
}

// changeID names a change by its op and the unique v the writer gave it:
// c and u carry their v in after, d the v of the row it deleted (before:
// REPLICA IDENTITY FULL), r the v of the row read.
func changeID(t testing.TB, line string) string {
	e := parse(t, line)
	row := e.After
	if e.Op == "d" {
		row = e.Before
	}
	require.NotNil(t, row, "%s: no row", line)
	return fmt.Sprintf("%s%v", e.Op, row["v"])
}

// writer makes numbered changes to table items(id, v, note): inserts,
// updates and deletes, one to three per transaction; every change
// carries a v of its own, so each can be recognized in the output.
type writer struct {
	c        *pgx.Conn
	v        int
	nextID   int
	live     []int
	expected []string
}

func (w *writer) run(t testing.TB, n int, perSecond int) {
	t.Helper()
	ctx := context.Background()
	tick := time.Second / time.Duration(perSecond)
	start := time.Now()
	for done := 0; done < n; {
		tx, err := w.c.Begin(ctx)
		require.NoError(t, err)
		for k := 0; k < 1+done%3 && done < n; k++ {
			w.v++
			switch {
			case len(w.live) > 5 && w.v%5 == 0:
				i := w.v % len(w.live)
				id := w.live[i]
				var old int
				require.NoError(t, tx.QueryRow(ctx, "DELETE FROM items WHERE id = $1 RETURNING v", id).Scan(&old))
				w.live = slices.Delete(w.live, i, i+1)
				w.expected = append(w.expected, fmt.Sprintf("d%d", old))
			case len(w.live) > 0 && w.v%3 == 0:
				id := w.live[w.v%len(w.live)]
				_, err = tx.Exec(ctx, "UPDATE items SET v = $1, note = $2 WHERE id = $3", w.v, fmt.Sprintf("updated \"%d\"\n", w.v), id)
				require.NoError(t, err)
				w.expected = append(w.expected, fmt.Sprintf("u%d", w.v))
			default:
				w.nextID++
				_, err = tx.Exec(ctx, "INSERT INTO items (id, v, note) VALUES ($1, $2, $3)", w.nextID, w.v, "new")
				require.NoError(t, err)
				w.live = append(w.live, w.nextID)
				w.expected = append(w.expected, fmt.Sprintf("c%d", w.v))
			}
			done++
		}
		require.NoError(t, tx.Commit(ctx))
		if d := time.Until(start.Add(time.Duration(done) * tick)); d > 0 {
			time.Sleep(d)
		}
	}
}

// bigTxn inserts n rows in one transaction: more than a batch, so a
// checkpoint can fall inside it (the restored position then names how
// many of its changes were emitted).
func (w *writer) bigTxn(t testing.TB, n int) {
	t.Helper()
	ctx := context.Background()
	tx, err := w.c.Begin(ctx)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		w.v++
		w.nextID++
		_, err = tx.Exec(ctx, "INSERT INTO items (id, v, note) VALUES ($1, $2, 'big')", w.nextID, w.v)
		require.NoError(t, err)
		w.live = append(w.live, w.nextID)
		w.expected = append(w.expected, fmt.Sprintf("c%d", w.v))
	}
	require.NoError(t, tx.Commit(ctx))
}

// setupItems creates items with rows rows already in it (v 1..rows, read
// by the snapshot as r1..rows).
func setupItems(t testing.TB, c *pgx.Conn, rows int) *writer {
	t.Helper()
	mustExec(t, c, "CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL, note text)")
	mustExec(t, c, "ALTER TABLE items REPLICA IDENTITY FULL")
	w := &writer{c: c}
	for i := 1; i <= rows; i++ {
		w.v++
		w.nextID++
		mustExec(t, c, "INSERT INTO items (id, v, note) VALUES ($1, $2, 'old')", w.nextID, w.v)
		w.live = append(w.live, w.nextID)
		w.expected = append(w.expected, fmt.Sprintf("r%d", w.v))
	}
	return w
}

// requireOnce checks that got holds every expected change exactly once.
func requireOnce(t testing.TB, got, expected []string) {
	t.Helper()
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	var missing, dup, extra []string
	for _, e := range expected {
		switch count[e] {
		case 0:
			missing = append(missing, e)
		case 1:
		default:
			dup = append(dup, e)
		}
		delete(count, e)
	}
	for k := range count {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	require.True(t, len(missing)+len(dup)+len(extra) == 0, "%d records for %d changes: missing %v, duplicated %v, unexpected %v",
		len(got), len(expected), head(missing), head(dup), head(extra))
}

func head(s []string) []string {
	if len(s) > 10 {
		return append(s[:10:10], fmt.Sprintf("… (%d)", len(s)))
	}
	return s
}

// gauge returns operator uid's gauge.
func gauge(j *engine.Job, uid, name string) int64 {
	for _, op := range j.Info().Operators {
		if op.UID == uid {
			return op.Metrics[name]
		}
	}
	return 0
}

func compileSpec(spec string) (*engine.Graph, error) {
	return engine.Compile(testRegistry, "test.yaml", []byte(spec), engine.Defaults{})
}

// waitSlotActive waits until slot is created and a connection holds it.
// A slot being created is listed (and active) before it has its
// consistent point, which waits for the server's running transactions
// (other tests'): only changes committed after that point are decoded.
func waitSlotActive(t testing.TB, c *pgx.Conn, slot string) {
	t.Helper()
	runtimetest.WaitUntil(t, waitFor, "slot "+slot+" active", func() bool {
		var active bool
		err := c.QueryRow(context.Background(), "SELECT active AND confirmed_flush_lsn IS NOT NULL FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active)
		return err == nil && active
	})
}
