package runtime

// StopPreparer is implemented by operators (sinks above all) that act on a
// stop-with-savepoint: `flinkgo stop`, and the savepoint a daemon takes of
// each job when it shuts down. PrepareStop(id) is called on the subtask's
// goroutine just before SnapshotState(id) of that savepoint, after which
// the job ends, unless the savepoint fails, and then the job goes on as
// after any snapshot. An error fails the savepoint and the job over, like
// one from SnapshotState.
//
// The file sink rolls its in-progress part files here: a user who stops a
// job sees everything written before the stop in finished files, and a
// job restored from the savepoint starts new part files.
type StopPreparer interface {
	PrepareStop(id int64) error
}
