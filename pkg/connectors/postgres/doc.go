// Package postgres is the PostgreSQL table sink (type: postgres), on
// jackc/pgx.
//
// Append, exactly-once (the default): each subtask writes the rows after a
// barrier into one transaction (COPY), prepares it at the next barrier
// (PREPARE TRANSACTION '<prefix>-<subtask>-<checkpoint>') and commits it
// (COMMIT PREPARED) when that checkpoint completes: Flink's XA JDBC sink,
// with Postgres's own two-phase commit. The snapshot names the prepared
// transactions; a restore commits them (one Postgres no longer knows was
// committed before) and rolls back every other prepared transaction of its
// prefixes: prepared after the snapshot by an attempt that failed, their
// rows come again from the replay. Needs max_prepared_transactions > 0.
//
// Upsert (INSERT … ON CONFLICT (primaryKey) DO UPDATE) is exactly-once by
// idempotence, not by two-phase commit: its batches commit as they are
// sent and at every barrier, and a replay after a restore writes the same
// rows over themselves. A prepared transaction would keep the row locks of
// its keys until its checkpoint completes, so the next checkpoint's upsert
// of a key would wait for a commit that only the waiting subtask can run.
//
// Failures: a lost connection, a server restart or an error of Postgres
// fails the attempt; the job restores its last checkpoint and the sink
// reconnects at open (prepared transactions survive a server restart and
// are committed or rolled back by that restore). Upsert batches a
// serialization failure or deadlock rolled back are sent again first.
//
// Ownership: a prefix belongs to one job (runtime.OutputClaim's rule), in
// the table flinkgo_sink_owners of the sink's database, so two jobs
// restoring one snapshot cannot both commit what follows it.
package postgres
