// Package postgrescdc is the "postgres-cdc" source: PostgreSQL's changes
// through logical replication (pgoutput, jackc/pglogrepl), as records in
// Debezium's JSON envelope (docs/postgres-cdc.md is the user's guide).
//
// One subtask reads one replication slot. Its state (state.go) is the
// position: an LSN below which every transaction was emitted, plus the
// commit LSN and the count of changes emitted of a transaction a barrier
// fell inside. A restore starts replication at that LSN and skips, by
// commit LSN and count, what the checkpoint says was emitted, so every
// change is emitted once relative to the checkpoint. The position is
// confirmed to the server (standby status update) only from
// NotifyCheckpointComplete, for the checkpoint that holds it: the slot
// never releases WAL a restore may need. A restore older than the slot's
// confirmed position, a dropped slot or lost WAL fail the job with
// runtime.SuppressRestarts and what to do.
//
// Without state and with snapshot: initial, Open creates the slot with
// EXPORT_SNAPSHOT and imports the snapshot into a REPEATABLE READ
// transaction on a second connection; Polls read the tables through a
// cursor (op r) and the Poll that emits the last rows starts replication
// at the slot's consistent point. A snapshot cannot be resumed (the
// exported snapshot ends with its connection): a restore inside it is
// taken again when no row of it was emitted, refused otherwise.
//
// Goroutines: none of its own. Open, Poll, SnapshotState, the checkpoint
// notifications and Close run on the subtask's goroutine, in the runtime's
// order, so the two connections (statements, replication) need no lock.
// Poll waits on the replication socket with a read deadline (pollWait)
// and answers the server's keepalives; no Poll for wal_sender_timeout (a
// long backpressure) lets the server end the connection, and the job
// restarts from its checkpoint.
package postgrescdc
