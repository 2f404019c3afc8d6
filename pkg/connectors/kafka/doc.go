// Package kafka is the Kafka connector: the `kafka` source (replayable,
// offsets in checkpoints) and the `kafka` sink (at-least-once), on
// github.com/segmentio/kafka-go, which no other package imports.
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
// kafka.sink.flush (uid, subtask, checkpoint id).
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
// checkpoint waits for the records to be acknowledged.
//
// Delivery is at-least-once: records are written asynchronously in batches
// (acks=all); SnapshotState waits until every record written before the
// barrier is acknowledged, and a write error or a flush that outlasts
// deliveryTimeout fails the checkpoint and the job, which restarts from the
// last checkpoint and writes again what followed it. There is no
// exactly-once mode: kafka-go has no transactional producer, so records
// written after the last completed checkpoint may appear twice after a
// failure. Keyed records go to murmur2(key) mod partitions (Java's default
// partitioner); records without key go round-robin in runs of 1000.
package kafka
