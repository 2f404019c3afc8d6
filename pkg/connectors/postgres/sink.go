package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// Figures the sink publishes (per subtask; info sums them).
const (
	counterRows        = "rowsWritten"             // rows sent (in open, prepared or committed transactions)
	counterCommitted   = "transactionsCommitted"   // prepared transactions committed on checkpoint completion
	counterRecommitted = "transactionsRecommitted" // restored prepared transactions committed at open
	counterRolledBack  = "transactionsRolledBack"  // orphans (prepared, named by no snapshot restored) rolled back at open
	counterRetries     = "retries"                 // upsert batches sent again after a serialization failure or deadlock
	gaugePending       = "pendingTransactions"     // prepared, waiting for their checkpoint
	textPrefix         = "transactionPrefix"
)

// requestTimeout bounds each exchange with the server (a batch, a
// PREPARE, a COMMIT PREPARED, the open's catalog reads): past it the
// attempt fails and the job fails over, reconnecting at its restore.
const requestTimeout = 60 * time.Second

// maxRetries bounds how often an upsert batch is sent again after a
// serialization failure or a deadlock before the job fails over.
const maxRetries = 5

// sink writes rows into one table. Every method runs on the subtask's
// goroutine (see runtime.Operator).
//
// Exactly-once (append): the rows after a barrier go into one transaction
// on data (COPY), prepared at the next barrier (PREPARE TRANSACTION, in
// SnapshotState) and committed on ctl when the checkpoint completes
// (COMMIT PREPARED cannot run on data, which may already hold the next
// checkpoint's open transaction). Otherwise each batch is committed as it
// is sent, and every barrier sends what is buffered.
type sink struct {
	cfg    *config
	ctx    *runtime.Context
	data   *pgx.Conn
	ctl    *pgx.Conn // exactly-once: commits, restores, claims
	cols   []tableColumn
	names  []string
	convs  []converter
	exprs  *expr.Multi
	upsert string // the upsert statement

	prefix  string
	inTxn   bool // data holds an open transaction (exactly-once)
	txnRows int64
	pending []prepared
	row     []any // scratch for the expressions' results
	nbuf    int   // rows buffered
	buf     []any // upsert: the buffered rows, len(names) values each
	// append: the rows as a binary COPY stream (header first), sent by a
	// goroutine of its own while Process fills the other buffer; inflight
	// receives that send's outcome (nil: none in flight). While a send is
	// in flight only it touches data, inTxn, txnRows and rows.
	enc      []fieldEncoder
	copyBuf  []byte
	spare    []byte
	inflight chan error
	copySQL  string

	rows                                        atomic.Int64 // also written by the sender
	committed, recommitted, rolledBack, retries int64
}

var (
	_ runtime.Operator           = (*sink)(nil)
	_ runtime.Snapshotter        = (*sink)(nil)
	_ runtime.CheckpointListener = (*sink)(nil)
	_ runtime.StateDescriber     = (*sink)(nil)
)

func newSink(cfg *config) *sink { return &sink{cfg: cfg} }

// call runs f with the request timeout.
func call[T any](f func(ctx context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	return f(ctx)
}

func (s *sink) connect(ctx context.Context) (*pgx.Conn, error) {
	pc, err := pgx.ParseConfig(s.cfg.url)
	if err != nil {
		return nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: url: %w", err))
	}
	if pc.RuntimeParams == nil {
		pc.RuntimeParams = map[string]string{}
	}
	pc.RuntimeParams["lock_timeout"] = fmt.Sprintf("%dms", s.cfg.lockTimeout.Milliseconds())
	pc.RuntimeParams["application_name"] = "flinkgo " + s.ctx.UID()
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		err = fmt.Errorf("postgres sink: connect to %s: %w", s.cfg.where, err)
		switch sqlState(err) {
		case "28P01", "28000", "3D000": // bad password, no such role or database: no restart cures them
			err = runtime.SuppressRestarts(err)
		}
		return nil, err
	}
	return conn, nil
}

// Open connects, checks the table, the columns and the server's settings
// (a problem only the user can fix fails the job without restarts), and,
// exactly-once, claims the transaction prefixes and finishes what the
// restored snapshot left: commits its prepared transactions, rolls back
// the orphans (prepared after it, by an attempt that failed).
func (s *sink) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	restored, err := restoredState(ctx.OperatorState())
	if err != nil {
		return err
	}
	s.prefix = s.cfg.prefix
	if s.prefix == "" {
		s.prefix = defaultPrefix(ctx.JobID(), ctx.UID())
	}
	_, err = call(func(c context.Context) (struct{}, error) { return struct{}{}, s.open(c, restored) })
	s.publish()
	return err
}

func (s *sink) open(c context.Context, restored []subtaskState) error {
	var err error
	if s.data, err = s.connect(c); err != nil {
		return err
	}
	if s.cfg.twoPhase || len(restored) > 0 {
		if s.ctl, err = s.connect(c); err != nil {
			return err
		}
	}
	if s.cfg.twoPhase {
		var max int
		if err := s.data.QueryRow(c, "SELECT current_setting('max_prepared_transactions')::int").Scan(&max); err != nil {
			return fmt.Errorf("postgres sink: read max_prepared_transactions: %w", err)
		}
		if max == 0 {
			return runtime.SuppressRestarts(fmt.Errorf("postgres sink: %s has max_prepared_transactions = 0, so it refuses PREPARE TRANSACTION, which deliveryGuarantee: exactly-once needs (a transaction per checkpoint, prepared at the barrier, committed when the checkpoint completes). "+
				"Set max_prepared_transactions to at least the sink's parallelism × 2 (in postgresql.conf, or ALTER SYSTEM SET max_prepared_transactions = 100) and restart PostgreSQL; or use deliveryGuarantee: at-least-once (or mode: upsert)", s.cfg.where))
		}
	}
	oid, table, err := describeTable(c, s.data, s.cfg)
	if err != nil {
		return err
	}
	if s.cols, s.exprs, err = resolveColumns(s.cfg, table); err != nil {
		return err
	}
	tm := s.data.TypeMap()
	for _, col := range s.cols {
		s.names = append(s.names, col.name)
		s.convs = append(s.convs, converterFor(tm, col.oid))
		s.enc = append(s.enc, encoderFor(tm, col.oid))
	}
	quoted := make([]string, len(s.names))
	for i, n := range s.names {
		quoted[i] = pgx.Identifier{n}.Sanitize()
	}
	s.copySQL = fmt.Sprintf("COPY %s (%s) FROM STDIN BINARY", s.cfg.qualified(), strings.Join(quoted, ", "))
	s.row = make([]any, len(s.cols))
	if s.cfg.upsert {
		if err := checkUniqueKey(c, s.data, s.cfg, oid); err != nil {
			return err
		}
		s.upsert = upsertSQL(s.cfg, s.names)
		if _, err := s.data.Prepare(c, "flinkgo_upsert", s.upsert); err != nil {
			return runtime.SuppressRestarts(fmt.Errorf("postgres sink: mode: upsert into %s on primaryKey (%s): %w (the primary key columns must be those of a primary key or unique constraint of the table)",
				s.cfg.display(), strings.Join(s.cfg.primaryKey, ", "), err))
		}
	}
	if s.ctl == nil {
		return nil
	}
	if err := s.ctx.Fault("postgres.recover", s.ctx.UID(), s.ctx.Subtask()); err != nil {
		return err
	}
	return s.restore(c, restored)
}

// upsertSQL is INSERT … ON CONFLICT (primaryKey) DO UPDATE SET every
// other column (DO NOTHING when every column is in the key).
func upsertSQL(cfg *config, names []string) string {
	quoted := make([]string, len(names))
	params := make([]string, len(names))
	var set []string
	for i, n := range names {
		quoted[i] = pgx.Identifier{n}.Sanitize()
		params[i] = fmt.Sprintf("$%d", i+1)
		if !slices.Contains(cfg.primaryKey, n) {
			set = append(set, quoted[i]+" = EXCLUDED."+quoted[i])
		}
	}
	keys := make([]string, len(cfg.primaryKey))
	for i, k := range cfg.primaryKey {
		keys[i] = pgx.Identifier{k}.Sanitize()
	}
	action := "DO NOTHING"
	if len(set) > 0 {
		action = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) %s", cfg.qualified(),
		strings.Join(quoted, ", "), strings.Join(params, ", "), strings.Join(keys, ", "), action)
}

// restore claims the prefixes (this sink's and those the snapshot names),
// commits the snapshot's prepared transactions and rolls back the orphans.
// The work is shared by subtask index: subtask j finishes what the
// snapshot's subtasks i with i mod parallelism = j prepared, and the
// orphans of those indexes; no two subtasks touch one gid, and none
// touches a gid the current attempt prepares (each subtask prepares under
// its own index, after its own restore).
func (s *sink) restore(c context.Context, restored []subtaskState) error {
	prefixes := []string{}
	if s.cfg.twoPhase {
		prefixes = append(prefixes, s.prefix)
	}
	named := map[string]bool{}
	for _, st := range restored {
		if !slices.Contains(prefixes, st.Prefix) {
			prefixes = append(prefixes, st.Prefix)
		}
		for _, p := range st.Pending {
			named[p.GID] = true
		}
	}
	live, err := preparedGIDs(c, s.ctl, prefixes)
	if err != nil {
		return err
	}
	claimC := runtime.OutputClaim{Job: s.ctx.JobID(), JobName: s.ctx.JobName(), Operator: s.ctx.UID(), Restoring: s.ctx.Restored(),
		RestoredJob: s.ctx.RestoredJobID(), AllowNonEmpty: s.ctx.AllowNonEmptyOutput(), OwnerEnded: s.ctx.JobEnded}
	for _, p := range prefixes {
		idle := !slices.ContainsFunc(live, func(g string) bool { _, _, ok := parseGID(p, g); return ok })
		if err := claim(c, s.ctl, p, idle, claimC); err != nil {
			return fmt.Errorf("postgres sink %q: %w", s.ctx.UID(), err)
		}
	}
	mine := func(subtask int) bool { return subtask%s.ctx.Parallelism() == s.ctx.Subtask() }
	for _, st := range restored {
		if !mine(st.Subtask) {
			continue
		}
		for _, p := range st.Pending {
			known, err := finish(c, s.ctl, p.GID, true)
			if err != nil {
				return fmt.Errorf("postgres sink: commit the restored transaction of checkpoint %d: %w", p.Checkpoint, err)
			}
			if known {
				s.recommitted++
			}
		}
	}
	for _, g := range live {
		if named[g] {
			continue
		}
		for _, p := range prefixes {
			if sub, _, ok := parseGID(p, g); ok && mine(sub) {
				if _, err := finish(c, s.ctl, g, false); err != nil {
					return fmt.Errorf("postgres sink: roll back the orphaned transaction: %w", err)
				}
				s.rolledBack++
				s.ctx.Log().Info().Str("gid", g).Msg("rolled back a prepared transaction no restored snapshot names (its rows come again from the replay)")
				break
			}
		}
	}
	s.ctx.Log().Info().Str("table", s.cfg.display()).Str("transaction_prefix", s.prefix).Int64("recommitted", s.recommitted).
		Int64("rolled_back", s.rolledBack).Msg("postgres exactly-once sink opened")
	return nil
}

// Process evaluates the columns of each record into the buffer and sends
// it when it holds batchSize rows.
func (s *sink) Process(b *runtime.Batch, _ runtime.Output) error {
	if err := s.ctx.Fault("postgres.write", s.ctx.UID(), s.ctx.Subtask()); err != nil {
		return err
	}
	k := len(s.names)
	for i := range b.Records {
		r := &b.Records[i]
		if err := s.exprs.Eval(r, s.row); err != nil {
			return fmt.Errorf("postgres sink %q: %w", s.ctx.UID(), err)
		}
		if !s.cfg.upsert && s.nbuf == 0 {
			s.copyBuf = append(s.copyBuf[:0], copyHeader...)
		}
		at := len(s.copyBuf)
		if !s.cfg.upsert {
			s.copyBuf = binary.BigEndian.AppendUint16(s.copyBuf, uint16(k))
		}
		for c, v := range s.row {
			x, err := s.convs[c](v)
			if err == nil && !s.cfg.upsert {
				s.copyBuf, err = s.enc[c](s.copyBuf, x)
			}
			if err != nil {
				s.copyBuf = s.copyBuf[:at]
				s.buf = s.buf[:s.nbuf*k]
				return fmt.Errorf("postgres sink %q: column %s (%s): %w (record %s)", s.ctx.UID(), s.names[c], s.cols[c].typ, err, truncate(r.Value))
			}
			if s.cfg.upsert {
				s.buf = append(s.buf, x)
			}
		}
		s.nbuf++
		if s.nbuf >= s.cfg.batchSize {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush sends the buffered rows: upserts at once (committed), appends
// in the background (into the open transaction, exactly-once, opening
// it; else committed) after the send before it ended.
func (s *sink) flush() error {
	if err := s.wait(); err != nil || s.nbuf == 0 {
		return err
	}
	n := s.nbuf
	if s.cfg.upsert {
		k := len(s.names)
		_, err := call(func(c context.Context) (struct{}, error) { return struct{}{}, s.sendUpserts(c, n, k) })
		if err != nil {
			return fmt.Errorf("postgres sink: write %d rows into %s: %w", n, s.cfg.display(), err)
		}
		s.rows.Add(int64(n))
		clear(s.buf)
		s.buf, s.nbuf = s.buf[:0], 0
		return nil
	}
	buf := binary.BigEndian.AppendUint16(s.copyBuf, math.MaxUint16) // the trailer
	s.inflight = make(chan error, 1)
	go func() { s.inflight <- s.sendCopy(buf, n) }()
	s.copyBuf, s.spare, s.nbuf = s.spare, buf, 0
	return nil
}

// wait waits for the send in flight and returns its error.
func (s *sink) wait() error {
	if s.inflight == nil {
		return nil
	}
	err := <-s.inflight
	s.inflight = nil
	return err
}

// sendCopy sends one binary COPY stream of n rows (on the sender's
// goroutine).
func (s *sink) sendCopy(buf []byte, n int) error {
	_, err := call(func(c context.Context) (struct{}, error) {
		if s.cfg.twoPhase && !s.inTxn {
			if _, err := s.data.Exec(c, "BEGIN"); err != nil {
				return struct{}{}, err
			}
			s.inTxn, s.txnRows = true, 0
		}
		_, err := s.data.PgConn().CopyFrom(c, bytes.NewReader(buf), s.copySQL)
		return struct{}{}, err
	})
	if err != nil {
		return fmt.Errorf("postgres sink: write %d rows into %s: %w", n, s.cfg.display(), err)
	}
	s.rows.Add(int64(n))
	s.txnRows += int64(n)
	return nil
}

// sendUpserts sends n rows as one pipelined batch, one implicit
// transaction; a serialization failure or deadlock rolls it back and it
// is sent again (upserts are idempotent), up to maxRetries times.
func (s *sink) sendUpserts(c context.Context, n, k int) error {
	for attempt := 0; ; attempt++ {
		batch := &pgx.Batch{}
		for i := range n {
			batch.Queue("flinkgo_upsert", s.buf[i*k:(i+1)*k]...)
		}
		err := s.data.SendBatch(c, batch).Close()
		code := sqlState(err)
		if err == nil || attempt >= maxRetries || (code != codeSerializationFailure && code != codeDeadlock) {
			return err
		}
		s.retries++
		s.ctx.Log().Warn().Err(err).Int("attempt", attempt+1).Msg("upsert batch rolled back by the server; sending it again")
		select {
		case <-time.After(time.Duration(10<<attempt) * time.Millisecond):
		case <-c.Done():
			return err
		}
	}
}

// SnapshotState sends the buffer and, exactly-once, prepares the open
// transaction under the checkpoint's gid; the snapshot names every
// prepared transaction not yet committed.
func (s *sink) SnapshotState(id int64) error {
	err := s.flush()
	if werr := s.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if s.cfg.twoPhase && s.inTxn {
		if err := s.ctx.Fault("postgres.prepare", s.ctx.UID(), s.ctx.Subtask(), id); err != nil {
			return err
		}
		g := gid(s.prefix, s.ctx.Subtask(), id)
		_, err := call(func(c context.Context) (any, error) { return s.data.Exec(c, "PREPARE TRANSACTION "+quoteLiteral(g)) })
		s.inTxn = false
		if err != nil {
			return fmt.Errorf("postgres sink: PREPARE TRANSACTION %s (%d rows of checkpoint %d): %w", g, s.txnRows, id, err)
		}
		s.pending = append(s.pending, prepared{GID: g, Checkpoint: id, Rows: s.txnRows})
	}
	if s.cfg.twoPhase {
		putState(s.ctx.OperatorState(), subtaskState{Version: 1, Prefix: s.prefix, Subtask: s.ctx.Subtask(), Pending: slices.Clone(s.pending)})
	}
	s.publish()
	return nil
}

// NotifyCheckpointComplete commits the prepared transactions of
// checkpoints <= id. An error fails the job over; its restore commits
// them (the completed checkpoint names them).
func (s *sink) NotifyCheckpointComplete(id int64) error {
	if err := s.ctx.Fault("postgres.commit", s.ctx.UID(), s.ctx.Subtask(), id); err != nil {
		return err
	}
	defer s.publish()
	for len(s.pending) > 0 && s.pending[0].Checkpoint <= id {
		p := s.pending[0]
		known, err := call(func(c context.Context) (bool, error) { return finish(c, s.ctl, p.GID, true) })
		if err != nil {
			return fmt.Errorf("postgres sink: commit checkpoint %d: %w", p.Checkpoint, err)
		}
		if !known {
			s.ctx.Log().Warn().Str("gid", p.GID).Msg("prepared transaction already finished; taken as committed")
		}
		s.committed++
		s.pending = s.pending[1:]
	}
	return s.ctx.Fault("postgres.committed", s.ctx.UID(), s.ctx.Subtask(), id)
}

// NotifyCheckpointAborted keeps the prepared transactions: the next
// completed checkpoint commits them (its id is larger).
func (s *sink) NotifyCheckpointAborted(id int64) {
	s.ctx.Log().Debug().Int64("checkpoint_id", id).Int("pending_transactions", len(s.pending)).
		Msg("checkpoint aborted; prepared transactions wait for the next one")
}

// Close rolls back the open transaction (its rows come again from the
// replay) and leaves the prepared ones to the next commit or restore.
func (s *sink) Close() error {
	_ = s.wait() // the attempt ends: a failed send changes nothing now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range []*pgx.Conn{s.data, s.ctl} {
		if c != nil {
			_ = c.Close(ctx) // an open transaction ends with the session
		}
	}
	s.data, s.ctl = nil, nil
	return nil
}

// DescribeState summarises the snapshot for savepoint inspect.
func (s *sink) DescribeState() map[string]any {
	pending := make([]map[string]any, 0, len(s.pending))
	for _, p := range s.pending {
		pending = append(pending, map[string]any{"gid": p.GID, "checkpoint": p.Checkpoint, "rows": p.Rows})
	}
	return map[string]any{"table": s.cfg.display(), "transactionPrefix": s.prefix, "preparedTransactions": pending}
}

func (s *sink) publish() {
	m := s.ctx.Metrics()
	if m == nil {
		return
	}
	m.Counter(counterRows).Store(s.rows.Load())
	m.Counter(counterCommitted).Store(s.committed)
	m.Counter(counterRecommitted).Store(s.recommitted)
	m.Counter(counterRolledBack).Store(s.rolledBack)
	m.Counter(counterRetries).Store(s.retries)
	m.Gauge(gaugePending).Store(int64(len(s.pending)))
	if s.cfg.twoPhase {
		m.SetText(textPrefix, s.prefix)
	}
}
