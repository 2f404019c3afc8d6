// Package fault is the fault-point registry: named places in the code paths
// that matter for correctness where tests make an operation fail, panic,
// stall, or end the process. In production no injector is installed and
// every point costs one nil check (engine.Env.Fire).
package fault

// Point is a named place where a fault can be injected. Call sites pass
// the operator uid and subtask (and a checkpoint id where there is one) as
// attributes, so rules can match one operator.
type Point struct {
	Name string
	Doc  string
}

// Points lists every fault point in the code. A test checks that each Fire
// call site names one of these and that the suite exercises all of them.
var Points = []Point{
	{"task.open", "a subtask has its state restored and opens its operator (restore)"},
	{"task.snapshot", "a subtask takes the synchronous part of its snapshot"},
	{"task.notify-complete", "a subtask learns that a checkpoint completed (before sinks commit and sources ack)"},
	{"checkpoint.write-state", "a subtask's state file is written"},
	{"checkpoint.publish-metadata", "the coordinator publishes a checkpoint's _metadata"},
	{"checkpoint.record", "the job records a durable snapshot as its restore point (the daemon's registry), before anything commits"},
	{"checkpoint.metadata-published", "a snapshot's _metadata is published, before the job records it as completed (attributes: kind, id)"},
	{"checkpoint.discard", "retention deletes a subsumed checkpoint"},
	{"file.write", "the file sink writes a batch to its in-progress files"},
	{"file.precommit", "the file sink flushes and closes part files at a barrier"},
	{"file.commit", "the file sink renames a pending part file to its finished name"},
	{"file.commit-done", "the file sink finished committing a checkpoint's files"},
	{"file.restore", "the file sink re-commits, truncates and cleans up after a restore"},
	{"kafka.poll", "the Kafka source hands a batch to the runtime"},
	{"kafka.snapshot", "the Kafka source records its offsets"},
	{"kafka.commit-offsets", "the Kafka source commits a completed checkpoint's offsets to its group"},
	{"kafka.sink.flush", "the Kafka sink waits for its writes at a barrier"},
	{"kafka.txn.write", "the exactly-once Kafka sink writes a batch into its open transaction"},
	{"kafka.txn.precommit", "the exactly-once Kafka sink flushes its open transaction at a barrier (pre-commit)"},
	{"kafka.txn.commit", "the exactly-once Kafka sink commits a pre-committed transaction (checkpoint complete)"},
	{"kafka.txn.committed", "the exactly-once Kafka sink committed a checkpoint's transactions, before the notification returns"},
	{"kafka.txn.recover", "the exactly-once Kafka sink re-commits restored transactions and fences its transactional ids"},
	{"postgres.write", "the postgres sink evaluates a batch into its buffer (and sends full batches into the open transaction)"},
	{"postgres.prepare", "the exactly-once postgres sink prepares its open transaction at a barrier (PREPARE TRANSACTION)"},
	{"postgres.commit", "the exactly-once postgres sink commits a checkpoint's prepared transactions (COMMIT PREPARED)"},
	{"postgres.committed", "the postgres sink committed a checkpoint's transactions, before the notification returns"},
	{"postgres.recover", "the postgres sink commits the restored prepared transactions and rolls back the orphans"},
	{"file.read", "the file source hands a batch to the runtime"},
	{"nats.poll", "the NATS source hands a batch to the runtime"},
	{"nats.snapshot", "the NATS source records its bookmark or pending acks"},
	{"nats.ack", "the NATS queue source acknowledges messages"},
	{"nats.nak", "the NATS queue source returns unacknowledged messages"},
	{"nats.publish", "the NATS sink publishes a batch"},
}

// Known reports whether name is a registered point.
func Known(name string) bool {
	for _, p := range Points {
		if p.Name == name {
			return true
		}
	}
	return false
}
