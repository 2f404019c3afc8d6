// Package kafka is the Kafka connector: the `kafka` source (replayable,
// offsets in checkpoints) and the `kafka` sink (at-least-once, or
// exactly-once with transactions). segmentio/kafka-go serves the
// read_uncommitted source and the at-least-once sink; franz-go (kgo) the
// read_committed source and the exactly-once sink, which kafka-go cannot
// do (no transactional producer; its ReadCommitted delivers aborted
// records). No other package imports either client (dev tools aside).
//
// # Source
//
//	operators:
//	  - {uid: in, type: kafka, brokers: [localhost:9092], topic: flink-test,
//	     groupId: flink-test, startingOffsets: earliest, format: json}
//
// Options:
//
//	brokers                     required; host:port list to bootstrap from
//	topic | topics              one topic, or a list
//	groupId                     consumer group the offsets of completed checkpoints are committed to
//	startingOffsets             where partitions without restored state start:
//	                            earliest (default, as Flink's KafkaSource), latest,
//	                            committed (the group's offsets), a time (RFC 3339) or Unix ms
//	                            (the first record at or after it; the end if none)
//	autoOffsetReset             committed only, for a partition without a committed offset (or
//	                            one out of range): earliest (default: Flink's
//	                            committedOffsets(OffsetResetStrategy.EARLIEST)), latest, or none (fail)
//	format                      raw (default: the value's bytes as they are) or json (the value
//	                            must be valid JSON and is kept as its JSON bytes)
//	bounded                     latest: read up to the end offsets seen when a partition is first
//	                            assigned, then finish (the stop offsets are checkpointed too, so a
//	                            restarted bounded job ends where it would have)
//	partitionDiscoveryInterval  how often new partitions are looked for (default 30s; Flink's
//	                            default is 5 min; 0 disables; off when bounded)
//	onOffsetOutOfRange          fail (default), earliest or latest: a position the broker no
//	                            longer has (deleted by retention) fails the job with the topic,
//	                            partition and offsets in the error, or skips to the log start or
//	                            end, logging how many records were skipped
//	onDecodeError               format json: fail (default; the error names topic, partition and
//	                            offset) or skip (counted in the recordsSkipped gauge)
//	onMissingValue              format json: skip (default; counted in recordsWithoutValue) or
//	                            fail, for a record without value (a tombstone or an empty value)
//	retryTimeout                how long a partition reconnects to an unreachable broker, and
//	                            Open retries one (connection refused included), before the source
//	                            fails the job over (default 60s); meanwhile the source reports a
//	                            problem per partition and the partitionsNotFetching gauge
//	isolationLevel              read_uncommitted (default, Kafka's; kafka-go) or read_committed
//	                            (franz-go, committedsource.go: records of aborted transactions and
//	                            control records never reach the job, nothing past the last stable
//	                            offset is read; same positions and state, so savepoints of either
//	                            reader restore with the other)
//
// A record's Key is the Kafka key, its Timestamp the Kafka timestamp (ms),
// its Value the Kafka value. kafka-go reads a null value (a tombstone) and
// an empty one alike, as no bytes. Under format json such a record is
// skipped, as Flink's JSON format skips null, and counted in
// recordsWithoutValue, or fails the job with onMissingValue: fail
// (docs/values.md).
//
// Assignment. There is no consumer group membership and no rebalancing:
// partition p of topic t belongs to subtask
// ((javaHash(t)*31 & 0x7FFFFFFF) % parallelism + p) % parallelism, Flink's
// KafkaSourceEnumerator.getSplitOwner, so each subtask finds its partitions
// by itself, at start, on restore and on discovery.
//
// Checkpoints. Each subtask stores (topic, partition, next offset, stop
// offset) for its partitions in a Union list: on restore, at any
// parallelism, every subtask sees all positions and keeps those it owns,
// so a restored job continues exactly where the snapshot was taken.
// Partitions without restored state start at startingOffsets when their
// topic is new to the state, and at their earliest offset otherwise (they
// appeared after the snapshot), as partitions discovered while running do.
// Positions of topics no longer subscribed are dropped with a warning.
// When a checkpoint completes, its offsets are committed to groupId
// (generation -1, without joining the group) in the background, so lag
// tools see progress; a failed commit is logged and counted
// (offsetCommitFailures), never an error: the offsets that count are in
// the checkpoint. Intermediate savepoints commit nothing (Flink 1.15+).
//
// Gauges: recordsSkipped, recordsSkippedOutOfRange, pendingRecords
// (records in the assigned partitions not yet emitted, from the high
// watermarks of the last fetches), assignedPartitions, offsetCommitFailures.
//
// Reading. Each assigned partition has a fetcher goroutine with its own
// kafka-go Conn: it sends fetch requests (up to 4 MiB, long poll 500ms),
// decodes the records straight into chunks of up to one batch and hands
// whole chunks to Poll over one channel; Poll copies the record headers
// into the runtime's batch and tracks the next offset of each partition.
// There is no per-record channel hand-over as in kafka-go's Reader, and no
// per-record allocation beyond kafka-go's own (its Batch.ReadMessage
// allocates a fresh key and value per record, which the records keep, so
// copying them into an arena would only add a copy). Fetch errors
// reconnect with backoff (100ms to 5s); after retryTimeout without a
// successful fetch the source fails.
//
// Fault points (engine.Env.Fire): kafka.poll (uid, subtask),
// kafka.snapshot (uid, subtask, checkpoint id), kafka.commit-offsets (uid,
// subtask, checkpoint id; an error counts as a failed commit),
// kafka.sink.flush (uid, subtask, checkpoint id); of the exactly-once sink
// kafka.txn.write, kafka.txn.precommit, kafka.txn.commit,
// kafka.txn.committed and kafka.txn.recover (see internal/fault).
//
// # Sink
//
//	operators:
//	  - {uid: out, type: kafka, from: [evens], brokers: [localhost:9092],
//	     topic: evens, key: "idx % 10"}
//
// Options: brokers, topic (required); key, an expression over the record
// (see pkg/runtime/expr) whose value, as bytes, is the Kafka key (default:
// the record's key, e.g. the Kafka key of a kafka source or a keyBy's key);
// deliveryTimeout (default 2m, Kafka's delivery.timeout.ms), how long a
// checkpoint waits for the records to be acknowledged; deliveryGuarantee:
// at-least-once (default), exactly-once or none.
//
// With at-least-once, records are written asynchronously in batches
// (acks=all); SnapshotState waits until every record written before the
// barrier is acknowledged, and a write error or a flush that outlasts
// deliveryTimeout fails the checkpoint and the job, which restarts from the
// last checkpoint and writes again what followed it: records written after
// the last completed checkpoint may appear twice after a failure. Keyed
// records go to murmur2(key) mod partitions (Java's default partitioner);
// records without key go round-robin in runs of 1000. With none, the
// barrier does not wait for the writes.
//
// With exactly-once (txn.go, txsink.go; docs/kafka-transactions.md), each
// subtask writes into a transaction of one id of its pool
// (transactionalIdPrefix-subtask-k), pre-commits it at the barrier (flush;
// the transaction goes into the snapshot) and commits it when the
// checkpoint completes; a restore commits the restored transactions,
// fences the pools it takes over, and writes the records of restored
// transactions the broker aborted again from the topic (txnrewrite.go).
// Options: transactionalIdPrefix (default
// flinkgo-<job id>-<uid>), transactionTimeout (15m), transactionMaxTimeout
// (the brokers' transaction.max.timeout.ms, 15m), transactionalIdPoolSize.
// Keyed records go to murmur2(key) as well (franz-go's default partitioner);
// records without key fill one partition for a while, then the next
// (its uniform-bytes partitioner).
package kafka
