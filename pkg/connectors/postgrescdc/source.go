package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

const (
	// pollWait is how long Poll waits for the first change.
	pollWait = 50 * time.Millisecond
	// pollLinger is how long Poll waits for more changes once it has
	// some. 0: it takes what the connection has already read (pgconn
	// reads the socket in chunks) and returns when that runs out, so a
	// batch is as large as the load makes it and a lone change waits for
	// nothing (a 1ms linger made the commit → sink p50 1.6ms instead of
	// 0.44ms at 5,000 changes/s; BenchmarkCommitToSinkLatency).
	pollLinger = 0
	// statusInterval is how often the confirmed position is sent even
	// when it did not move: the server drops a replication connection
	// silent for wal_sender_timeout (60s by default).
	statusInterval = 10 * time.Second
	// opTimeout bounds each statement of Open and Close.
	opTimeout = 30 * time.Second
	// slotBusyWait is how long Open retries a slot still held by the
	// server process of a connection that died with the previous attempt
	// (kill -9): the server notices the closed socket shortly.
	slotBusyWait = 20 * time.Second
	// snapshotFetch is how many rows one FETCH of the snapshot reads.
	snapshotFetch = 512
)

// Gauges (per subtask).
const (
	gaugeConfirmed = "confirmedLsn"   // the LSN confirmed to the server (checkpoint completed)
	gaugePosition  = "positionLsn"    // the position as of the last Poll
	gaugeSnapshot  = "snapshotRows"   // rows of the initial snapshot emitted
	counterSkipped = "changesSkipped" // truncates and changes of unlisted tables
)

// source is the postgres-cdc subtask: the snapshot (phaseSnapshot), then
// the slot's changes (phaseStreaming). Every method runs on the subtask's
// goroutine, so the two connections need no lock.
type source struct {
	cfg    *config
	ctx    *runtime.Context
	db     *pgconn.PgConn // statements: catalog, publication, slot, snapshot
	repl   *pgconn.PgConn // the replication connection
	dbName string

	tables map[tableName]*relation // by name, from the catalog
	rels   map[uint32]*relation    // by relation id, from the stream

	pos       position
	snapLSN   pglogrepl.LSN // the consistent point (snapshot phase)
	snapTable int           // table of the snapshot being read
	snapOpen  bool          // a cursor is open on it
	ahead     [][][]byte    // a row fetched and not emitted yet
	streaming bool          // START_REPLICATION was sent

	// Of the transaction being received.
	inTxn    bool
	txnLSN   pglogrepl.LSN // its commit LSN
	txnXid   uint32
	txnMs    int64 // its commit time, Unix ms
	txnIndex uint64
	txnSkip  uint64 // changes of it already emitted before the checkpoint restored
	skipTxn  bool   // all of it was emitted before

	pending    map[int64]pglogrepl.LSN // checkpoint → LSN to confirm when it completes
	confirmed  pglogrepl.LSN
	sentStatus time.Time
	sentLSN    pglogrepl.LSN

	buf []byte

	gConfirmed, gPosition, gSnapshot interface{ Store(int64) }
}

func (s *source) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	s.pending = map[int64]pglogrepl.LSN{}
	s.rels = map[uint32]*relation{}
	m := ctx.Metrics()
	s.gConfirmed, s.gPosition, s.gSnapshot = m.Gauge(gaugeConfirmed), m.Gauge(gaugePosition), m.Gauge(gaugeSnapshot)
	restored, err := s.restored()
	if err != nil {
		return err
	}
	c, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if s.db, err = pgconn.Connect(c, s.cfg.url); err != nil {
		return fmt.Errorf("postgres-cdc: connect: %w", err)
	}
	s.dbName = s.db.ParameterStatus("database")
	if s.dbName == "" {
		s.dbName, _ = queryOne(c, s.db, "SELECT current_database()")
	}
	if err := s.checkServer(c); err != nil {
		return err
	}
	if err := s.loadTables(c); err != nil {
		return err
	}
	if err := s.ensurePublication(c); err != nil {
		return err
	}
	if err := s.connectReplication(c); err != nil {
		return err
	}
	slot, err := s.lookupSlot(c)
	if err != nil {
		return err
	}
	if restored {
		err = s.resume(c, slot)
	} else {
		err = s.start(c, slot)
	}
	if err != nil {
		return err
	}
	s.confirmed = s.pos.lsn
	s.gConfirmed.Store(int64(s.confirmed))
	s.gPosition.Store(int64(s.pos.lsn))
	ctx.Log().Info().Str("slot", s.cfg.slot).Str("publication", s.cfg.publication).Stringer("from", s.pos).Bool("restored", restored).
		Msg("postgres-cdc source opened")
	return nil
}

// restored takes the position from the restored state. A restore inside
// the snapshot phase after some of its rows were emitted cannot be
// resumed exactly once (the exported snapshot died with its connection).
func (s *source) restored() (bool, error) {
	items := s.ctx.OperatorState().Get(stateList)
	if len(items) == 0 {
		return false, nil
	}
	p, err := decodePosition(items[0])
	if err != nil {
		return false, fmt.Errorf("restore postgres-cdc source %q: %w", s.ctx.UID(), err)
	}
	if p.slot != s.cfg.slot {
		s.ctx.Log().Warn().Str("restored_slot", p.slot).Str("slot", s.cfg.slot).
			Msg("restored postgres-cdc position is for another slot; starting without it (snapshot option applies)")
		return false, nil
	}
	if p.phase == phaseSnapshot {
		if p.count == 0 {
			s.ctx.Log().Info().Msg("restored inside the initial snapshot before any row of it was emitted: taking the snapshot again")
			return false, nil
		}
		return false, runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: the restored checkpoint was taken during the initial snapshot (%d rows of it emitted), "+
			"and a snapshot cannot be resumed: its rows were read in a database snapshot that ended with the failed attempt. "+
			"Start the job again without this checkpoint (no -s), into a fresh output, to take the snapshot anew; "+
			"to avoid this, let the snapshot finish between checkpoints (a checkpoint interval longer than the snapshot takes) or use snapshot: never", p.count))
	}
	s.pos = p
	return true, nil
}

// checkServer refuses a server that cannot decode logically.
func (s *source) checkServer(c context.Context) error {
	level, err := queryOne(c, s.db, "SHOW wal_level")
	if err != nil {
		return fmt.Errorf("postgres-cdc: %w", err)
	}
	if level != "logical" {
		return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: the server's wal_level is %s; logical replication needs wal_level = logical "+
			"in postgresql.conf (ALTER SYSTEM SET wal_level = logical, then restart PostgreSQL)", level))
	}
	return nil
}

// loadTables reads each table's columns and primary key from the catalog.
func (s *source) loadTables(c context.Context) error {
	s.tables = map[tableName]*relation{}
	for _, t := range s.cfg.tables {
		rows, err := query(c, s.db, `SELECT a.attname, a.atttypid::text,
  coalesce((SELECT k.n FROM pg_index i, unnest(i.indkey::int2[]) WITH ORDINALITY k(a, n)
    WHERE i.indrelid = c.oid AND i.indisprimary AND k.a = a.attnum), 0)::text
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum`, t.schema, t.name)
		if err != nil {
			return fmt.Errorf("postgres-cdc: columns of %s: %w", t, err)
		}
		if len(rows) == 0 {
			return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: table %s does not exist in database %s (tables: lists [schema.]table as in the catalog)", t, s.dbName))
		}
		rel := &relation{table: t}
		keyAt := map[int]int{}
		for i, r := range rows {
			var oid uint32
			fmt.Sscan(r[1], &oid)
			rel.cols = append(rel.cols, column{name: r[0], oid: oid})
			var k int
			fmt.Sscan(r[2], &k)
			if k > 0 {
				keyAt[k] = i
			}
		}
		for k := 1; k <= len(keyAt); k++ {
			rel.key = append(rel.key, keyAt[k])
		}
		if len(rel.key) == 0 {
			s.ctx.Log().Warn().Stringer("table", t).Msg("table has no primary key: its records have no key, and updates and deletes need REPLICA IDENTITY FULL to be replicated")
		}
		s.tables[t] = rel
	}
	return nil
}

// ensurePublication creates the publication of the tables, or checks that
// the existing one has them all.
func (s *source) ensurePublication(c context.Context) error {
	n, err := queryOne(c, s.db, "SELECT count(*)::text FROM pg_publication WHERE pubname = $1", s.cfg.publication)
	if err != nil {
		return fmt.Errorf("postgres-cdc: publication: %w", err)
	}
	if n == "0" {
		names := make([]string, len(s.cfg.tables))
		for i, t := range s.cfg.tables {
			names[i] = t.sql()
		}
		if err := exec(c, s.db, "CREATE PUBLICATION "+quoteIdent(s.cfg.publication)+" FOR TABLE "+strings.Join(names, ", ")); err != nil {
			return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: create publication %s: %w (the user needs CREATE on the database and to own the tables; or create it as a superuser: CREATE PUBLICATION %s FOR TABLE %s)",
				s.cfg.publication, err, s.cfg.publication, strings.Join(names, ", ")))
		}
		s.ctx.Log().Info().Str("publication", s.cfg.publication).Msg("publication created")
		return nil
	}
	rows, err := query(c, s.db, "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1", s.cfg.publication)
	if err != nil {
		return fmt.Errorf("postgres-cdc: publication: %w", err)
	}
	has := map[tableName]bool{}
	for _, r := range rows {
		has[tableName{r[0], r[1]}] = true
	}
	var missing []string
	for _, t := range s.cfg.tables {
		if !has[t] {
			missing = append(missing, t.sql())
		}
	}
	if len(missing) > 0 {
		return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: publication %s exists and lacks %s: ALTER PUBLICATION %s ADD TABLE %s, or name another publication (option publication)",
			s.cfg.publication, strings.Join(missing, ", "), s.cfg.publication, strings.Join(missing, ", ")))
	}
	return nil
}

func (s *source) connectReplication(c context.Context) error {
	rc, err := pgconn.ParseConfig(s.cfg.url)
	if err != nil {
		return fmt.Errorf("postgres-cdc: %w", err)
	}
	rc.RuntimeParams["replication"] = "database"
	if s.repl, err = pgconn.ConnectConfig(c, rc); err != nil {
		return fmt.Errorf("postgres-cdc: replication connection: %w (the user needs the REPLICATION attribute, and pg_hba.conf must allow it)", err)
	}
	return nil
}

// slotInfo is a replication slot as pg_replication_slots shows it.
type slotInfo struct {
	exists    bool
	plugin    string
	database  string
	confirmed pglogrepl.LSN
	walStatus string
}

func (s *source) lookupSlot(c context.Context) (slotInfo, error) {
	rows, err := query(c, s.db, `SELECT coalesce(plugin, ''), coalesce(database, ''), coalesce(confirmed_flush_lsn::text, '0/0'), coalesce(wal_status, '')
FROM pg_replication_slots WHERE slot_name = $1`, s.cfg.slot)
	if err != nil {
		return slotInfo{}, fmt.Errorf("postgres-cdc: replication slot: %w", err)
	}
	if len(rows) == 0 {
		return slotInfo{}, nil
	}
	lsn, err := pglogrepl.ParseLSN(rows[0][2])
	if err != nil {
		return slotInfo{}, fmt.Errorf("postgres-cdc: slot %s: %w", s.cfg.slot, err)
	}
	return slotInfo{exists: true, plugin: rows[0][0], database: rows[0][1], confirmed: lsn, walStatus: rows[0][3]}, nil
}

// resume continues from a restored streaming position.
func (s *source) resume(c context.Context, slot slotInfo) error {
	switch {
	case !slot.exists:
		return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: replication slot %s does not exist (dropped?), so the changes after the checkpoint's %s are gone from the server. "+
			"Start the job without this checkpoint (no -s): it creates the slot and, with snapshot: initial, reads the tables anew (into a fresh output, or expect the snapshot's rows again)", s.cfg.slot, s.pos))
	case slot.walStatus == "lost":
		return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: replication slot %s lost the WAL it needs (wal_status lost: max_slot_wal_keep_size was exceeded), so the changes after %s are gone. "+
			"Drop the slot (SELECT pg_drop_replication_slot('%s')) and start the job without this checkpoint to take a new snapshot; raise max_slot_wal_keep_size (or -1) to keep this from recurring", s.cfg.slot, s.pos, s.cfg.slot))
	case slot.confirmed > s.pos.lsn:
		return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: the checkpoint's position %s is older than replication slot %s's confirmed position %s: "+
			"a later checkpoint was confirmed to the server, which then released the changes in between. Restore the latest checkpoint or savepoint of this job instead, "+
			"or start without one (no -s) to take a new snapshot", s.pos, s.cfg.slot, slot.confirmed))
	case slot.plugin != "pgoutput":
		return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: replication slot %s uses plugin %s; this source needs pgoutput: name another slot (option slot)", s.cfg.slot, slot.plugin))
	}
	return s.startStreaming(c)
}

// start begins without restored state: a new slot (and the snapshot), or
// an existing slot's position with snapshot: never.
func (s *source) start(c context.Context, slot slotInfo) error {
	if slot.exists && slot.database != s.dbName {
		return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: replication slot %s belongs to database %s, not %s: name another slot (option slot)", s.cfg.slot, slot.database, s.dbName))
	}
	if slot.exists && !s.cfg.snapshot {
		if slot.plugin != "pgoutput" {
			return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: replication slot %s uses plugin %s; this source needs pgoutput: name another slot (option slot)", s.cfg.slot, slot.plugin))
		}
		s.pos = position{slot: s.cfg.slot, phase: phaseStreaming, lsn: slot.confirmed}
		return s.startStreaming(c)
	}
	if slot.exists {
		// A snapshot must be consistent with the slot's start: only a new
		// slot exports one. The slot is this source's (its name), left by
		// a run that has no checkpoint to resume.
		s.ctx.Log().Warn().Str("slot", s.cfg.slot).Msg("dropping the existing replication slot to take the initial snapshot consistent with a new one (no checkpoint to resume)")
		if err := s.dropSlot(c); err != nil {
			return err
		}
	}
	action := "NOEXPORT_SNAPSHOT"
	if s.cfg.snapshot {
		action = "EXPORT_SNAPSHOT"
	}
	var res pglogrepl.CreateReplicationSlotResult
	err := retryBusy(c, func() (err error) {
		res, err = pglogrepl.CreateReplicationSlot(c, s.repl, s.cfg.slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: action})
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres-cdc: create replication slot %s: %w (the user needs the REPLICATION attribute; max_replication_slots must leave one free)", s.cfg.slot, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return fmt.Errorf("postgres-cdc: slot %s: %w", s.cfg.slot, err)
	}
	s.ctx.Log().Info().Str("slot", s.cfg.slot).Stringer("consistentPoint", lsn).Msg("replication slot created")
	if !s.cfg.snapshot {
		s.pos = position{slot: s.cfg.slot, phase: phaseStreaming, lsn: lsn}
		return s.startStreaming(c)
	}
	s.pos = position{slot: s.cfg.slot, phase: phaseSnapshot, lsn: lsn}
	s.snapLSN = lsn
	if err := exec(c, s.db, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fmt.Errorf("postgres-cdc: snapshot: %w", err)
	}
	if err := exec(c, s.db, "SET TRANSACTION SNAPSHOT '"+res.SnapshotName+"'"); err != nil {
		return fmt.Errorf("postgres-cdc: snapshot: %w", err)
	}
	return nil
}

func (s *source) dropSlot(c context.Context) error {
	return retryBusy(c, func() error {
		return exec(c, s.db, "SELECT pg_drop_replication_slot($1)", s.cfg.slot)
	})
}

// retryBusy retries f while the slot is held by another server process
// (SQLSTATE 55006), for slotBusyWait.
func retryBusy(c context.Context, f func() error) error {
	end := time.Now().Add(slotBusyWait)
	for {
		err := f()
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "55006" || time.Now().After(end) {
			return err
		}
		select {
		case <-c.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *source) startStreaming(c context.Context) error {
	err := retryBusy(c, func() error {
		return pglogrepl.StartReplication(c, s.repl, s.cfg.slot, s.pos.lsn, pglogrepl.StartReplicationOptions{
			Mode:       pglogrepl.LogicalReplication,
			PluginArgs: []string{"proto_version '1'", "publication_names '" + s.cfg.publication + "'"},
		})
	})
	if err != nil {
		return s.replicationError(fmt.Errorf("start replication from %s: %w", s.pos.lsn, err))
	}
	s.streaming = true
	s.sentStatus = time.Now()
	return nil
}

// replicationError explains the server's errors that no restart cures.
func (s *source) replicationError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "42704": // undefined_object
			return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: %w: replication slot %s was dropped while the job ran. "+
				"Start the job without its checkpoint (no -s) to create the slot and take a new snapshot", err, s.cfg.slot))
		case strings.Contains(pe.Message, "has already been removed") || strings.Contains(pe.Message, "can no longer") || strings.Contains(pe.Message, "invalidated"):
			return runtime.SuppressRestarts(fmt.Errorf("postgres-cdc: %w: the WAL from %s is gone. Drop the slot (SELECT pg_drop_replication_slot('%s')) and start the job without its checkpoint to take a new snapshot",
				err, s.pos, s.cfg.slot))
		}
	}
	return fmt.Errorf("postgres-cdc: %w", err)
}

func (s *source) Poll(b *runtime.Batch) error {
	if s.pos.phase == phaseSnapshot {
		return s.pollSnapshot(b)
	}
	return s.pollStream(b)
}

// pollSnapshot emits the next rows of the snapshot; after the last table
// it ends the snapshot's transaction and starts replication at the slot's
// consistent point.
func (s *source) pollSnapshot(b *runtime.Batch) error {
	c, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if s.snapTable >= len(s.cfg.tables) {
		return s.endSnapshot(c)
	}
	rel := s.tables[s.cfg.tables[s.snapTable]]
	if !s.snapOpen {
		cols := make([]string, len(rel.cols))
		for i, col := range rel.cols {
			cols[i] = quoteIdent(col.name) + "::text"
		}
		if err := exec(c, s.db, "DECLARE flinkgo_snapshot NO SCROLL CURSOR FOR SELECT "+strings.Join(cols, ", ")+" FROM "+rel.table.sql()); err != nil {
			return fmt.Errorf("postgres-cdc: snapshot of %s: %w", rel.table, err)
		}
		s.snapOpen = true
	}
	// One row more than the batch takes is fetched and kept for the next
	// Poll (s.ahead): a FETCH that returns no more than the batch takes
	// shows the table's end, so the Poll that emits a table's last rows
	// knows it is done.
	n := min(snapshotFetch, cap(b.Records)-len(b.Records))
	res := s.db.Exec(c, fmt.Sprintf("FETCH FORWARD %d FROM flinkgo_snapshot", n+1-len(s.ahead)))
	results, err := res.ReadAll()
	if err != nil {
		return fmt.Errorf("postgres-cdc: snapshot of %s: %w", rel.table, err)
	}
	rows := append(s.ahead, results[0].Rows...)
	s.ahead = nil
	more := len(rows) > n
	if more {
		s.ahead = [][][]byte{rows[n]}
		rows = rows[:n]
	}
	now := time.Now().UnixMilli()
	ch := change{op: 'r', rel: rel, lsn: s.snapLSN, commitMs: now, db: s.dbName}
	tuple := &pglogrepl.TupleData{}
	for _, r := range rows {
		tuple.Columns = tuple.Columns[:0]
		for _, v := range r {
			if v == nil {
				tuple.Columns = append(tuple.Columns, &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeNull})
			} else {
				tuple.Columns = append(tuple.Columns, &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeText, Data: v})
			}
		}
		ch.after = tuple
		s.emit(b, &ch, now)
		s.pos.count++
	}
	s.gSnapshot.Store(int64(s.pos.count))
	if !more {
		if err := exec(c, s.db, "CLOSE flinkgo_snapshot"); err != nil {
			return fmt.Errorf("postgres-cdc: snapshot of %s: %w", rel.table, err)
		}
		s.snapOpen = false
		s.snapTable++
		if s.snapTable == len(s.cfg.tables) {
			// In the same Poll as the last rows: a barrier after them finds
			// the streaming phase, so a snapshot read in one Poll is never
			// cut by a checkpoint.
			return s.endSnapshot(c)
		}
	}
	return nil
}

// endSnapshot ends the snapshot's transaction and starts replication at
// the slot's consistent point.
func (s *source) endSnapshot(c context.Context) error {
	if err := exec(c, s.db, "COMMIT"); err != nil {
		return fmt.Errorf("postgres-cdc: snapshot: %w", err)
	}
	s.ctx.Log().Info().Uint64("rows", s.pos.count).Msg("initial snapshot read; streaming from the slot")
	s.pos = position{slot: s.cfg.slot, phase: phaseStreaming, lsn: s.snapLSN}
	return s.startStreaming(c)
}

// emit appends the record of a change.
func (s *source) emit(b *runtime.Batch, c *change, nowMs int64) {
	s.buf = appendEnvelope(s.buf[:0], c, nowMs)
	value := append([]byte(nil), s.buf...)
	keyTuple := c.after
	if c.op == 'd' {
		keyTuple = c.before // the key columns at least (REPLICA IDENTITY DEFAULT sends those)
	}
	key := appendKey(nil, c.rel, keyTuple)
	b.Records = append(b.Records, runtime.Record{Key: key, Value: value, Timestamp: c.commitMs})
}

// pollStream receives the slot's messages for up to pollWait, or until
// the batch is full or the stream pauses for pollLinger.
func (s *source) pollStream(b *runtime.Batch) error {
	if err := s.sendStatus(false); err != nil {
		return err
	}
	conn := s.repl.Conn()
	deadline := time.Now().Add(pollWait)
	defer conn.SetReadDeadline(time.Time{})
	for len(b.Records) < cap(b.Records) {
		d := deadline
		if len(b.Records) > 0 {
			d = time.Now().Add(pollLinger)
		}
		if err := conn.SetReadDeadline(d); err != nil {
			return fmt.Errorf("postgres-cdc: %w", err)
		}
		msg, err := s.repl.ReceiveMessage(context.Background())
		if err != nil {
			if pgconn.Timeout(err) {
				break
			}
			return s.replicationError(fmt.Errorf("receive: %w", err))
		}
		switch msg := msg.(type) {
		case *pgproto3.CopyData:
			if err := s.handle(b, msg.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return s.replicationError(pgconn.ErrorResponseToPgError(msg))
		default:
			return fmt.Errorf("postgres-cdc: unexpected message %T from the server", msg)
		}
	}
	s.gPosition.Store(int64(s.pos.lsn))
	return nil
}

// handle decodes one CopyData message of the replication stream.
func (s *source) handle(b *runtime.Batch, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		k, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("postgres-cdc: %w", err)
		}
		// Between transactions, the server's sent position covers every
		// transaction committed before it (sent, or not published): the
		// position may advance, so an idle table's slot does not pin WAL.
		if !s.inTxn && s.pos.txn == 0 && k.ServerWALEnd > s.pos.lsn {
			s.pos.lsn = k.ServerWALEnd
		}
		if k.ReplyRequested {
			return s.sendStatus(true)
		}
		return nil
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("postgres-cdc: %w", err)
		}
		return s.decode(b, x)
	}
	return nil
}

// decode handles one pgoutput message.
func (s *source) decode(b *runtime.Batch, x pglogrepl.XLogData) error {
	m, err := pglogrepl.Parse(x.WALData)
	if err != nil {
		return fmt.Errorf("postgres-cdc: decode at %s: %w", x.WALStart, err)
	}
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		rel := &relation{table: tableName{m.Namespace, m.RelationName}}
		for _, c := range m.Columns {
			rel.cols = append(rel.cols, column{name: c.Name, oid: c.DataType})
		}
		if known := s.tables[rel.table]; known != nil {
			for _, k := range known.key {
				name := known.cols[k].name
				for i, c := range rel.cols {
					if c.name == name {
						rel.key = append(rel.key, i)
					}
				}
			}
			s.rels[m.RelationID] = rel
		} else {
			delete(s.rels, m.RelationID)
		}
	case *pglogrepl.BeginMessage:
		s.inTxn, s.txnLSN, s.txnXid, s.txnMs, s.txnIndex = true, m.FinalLSN, m.Xid, m.CommitTime.UnixMilli(), 0
		s.skipTxn = m.FinalLSN < s.pos.lsn
		s.txnSkip = 0
		if m.FinalLSN == s.pos.txn {
			s.txnSkip = s.pos.count
		}
	case *pglogrepl.CommitMessage:
		if !s.skipTxn && m.TransactionEndLSN > s.pos.lsn {
			s.pos.lsn = m.TransactionEndLSN
		}
		s.pos.txn, s.pos.count = 0, 0
		s.inTxn = false
	case *pglogrepl.InsertMessage:
		return s.change(b, 'c', m.RelationID, nil, m.Tuple, x.WALStart)
	case *pglogrepl.UpdateMessage:
		return s.change(b, 'u', m.RelationID, m.OldTuple, m.NewTuple, x.WALStart)
	case *pglogrepl.DeleteMessage:
		return s.change(b, 'd', m.RelationID, m.OldTuple, nil, x.WALStart)
	case *pglogrepl.TruncateMessage:
		s.ctx.Metrics().Counter(counterSkipped).Add(1)
		s.ctx.Log().Warn().Msg("TRUNCATE of a replicated table: no records are emitted for it (Debezium's default)")
	}
	return nil
}

// change emits an insert, update or delete unless the checkpoint restored
// says it was emitted before.
func (s *source) change(b *runtime.Batch, op byte, relID uint32, before, after *pglogrepl.TupleData, lsn pglogrepl.LSN) error {
	rel := s.rels[relID]
	if rel == nil {
		s.ctx.Metrics().Counter(counterSkipped).Add(1)
		return nil // a table of the publication this source does not list
	}
	if !s.inTxn {
		return fmt.Errorf("postgres-cdc: a change at %s outside a transaction (protocol error)", lsn)
	}
	s.txnIndex++
	if s.skipTxn || s.txnIndex <= s.txnSkip {
		return nil
	}
	c := change{op: op, rel: rel, before: before, after: after, lsn: lsn, xid: s.txnXid, commitMs: s.txnMs, db: s.dbName}
	s.emit(b, &c, time.Now().UnixMilli())
	s.pos.txn, s.pos.count = s.txnLSN, s.txnIndex
	return nil
}

// sendStatus confirms s.confirmed to the server when it moved, when
// statusInterval passed, or when asked (force).
func (s *source) sendStatus(force bool) error {
	if !s.streaming || (!force && s.confirmed == s.sentLSN && time.Since(s.sentStatus) < statusInterval) {
		return nil
	}
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), s.repl, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.confirmed})
	if err != nil {
		return fmt.Errorf("postgres-cdc: standby status update: %w", err)
	}
	s.sentStatus, s.sentLSN = time.Now(), s.confirmed
	return nil
}

// SnapshotState stores the position; in the streaming phase, its LSN is
// confirmed to the server when this checkpoint completes.
func (s *source) SnapshotState(id int64) error {
	s.ctx.OperatorState().Set(stateList, state.Union, [][]byte{s.pos.encode()})
	if s.pos.phase == phaseStreaming {
		s.pending[id] = s.pos.lsn
	}
	return nil
}

// NotifyCheckpointComplete confirms the position of checkpoint id (and
// drops older ones): the server may now release the WAL before it.
func (s *source) NotifyCheckpointComplete(id int64) error {
	var lsn pglogrepl.LSN
	for cp, l := range s.pending {
		if cp <= id {
			lsn = max(lsn, l)
			delete(s.pending, cp)
		}
	}
	if lsn <= s.confirmed {
		return nil
	}
	s.confirmed = lsn
	s.gConfirmed.Store(int64(lsn))
	return s.sendStatus(false)
}

// NotifyCheckpointAborted forgets the position of checkpoint id.
func (s *source) NotifyCheckpointAborted(id int64) { delete(s.pending, id) }

// DescribeState shows the position (savepoint inspect).
func (s *source) DescribeState() map[string]any {
	out := map[string]any{"slot": s.cfg.slot, "lsn": s.pos.lsn.String()}
	if s.pos.phase == phaseSnapshot {
		out["phase"] = "snapshot"
		out["snapshotRows"] = s.pos.count
	} else {
		out["phase"] = "streaming"
	}
	return out
}

func (s *source) Close() error {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.repl != nil {
		_ = s.repl.Close(c)
	}
	if s.db != nil {
		_ = s.db.Close(c)
	}
	return nil
}

// query runs a statement with parameters and returns its rows as text.
func query(c context.Context, conn *pgconn.PgConn, sql string, args ...string) ([][]string, error) {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	res := conn.ExecParams(c, sql, params, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	out := make([][]string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j] = string(v)
		}
	}
	return out, nil
}

func queryOne(c context.Context, conn *pgconn.PgConn, sql string, args ...string) (string, error) {
	rows, err := query(c, conn, sql, args...)
	if err != nil {
		return "", err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return "", fmt.Errorf("%s: no rows", sql)
	}
	return rows[0][0], nil
}

func exec(c context.Context, conn *pgconn.PgConn, sql string, args ...string) error {
	if len(args) > 0 {
		_, err := query(c, conn, sql, args...)
		return err
	}
	_, err := conn.Exec(c, sql).ReadAll()
	return err
}
