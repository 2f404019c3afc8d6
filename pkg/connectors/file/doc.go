// Package file is the exactly-once file sink (type "file"), Flink's
// FileSink with row formats.
//
// Each sink subtask writes, per bucket (a time-named directory below
// path), one hidden in-progress part file. A part is rolled — closed and
// fsynced — when the rolling policy says so (size, rollover interval,
// inactivity, or every checkpoint with onCheckpoint), and becomes pending.
// At barrier n the sink pre-commits: it flushes and fsyncs the in-progress
// parts, syncs the directories holding new files and records in its state
// the pending parts (committables) and the in-progress parts with their
// valid length (resumables). When checkpoint n completes, the pending
// parts of checkpoints <= n are committed: renamed to their finished
// names, then the directories are fsynced. Readers must skip names that
// start with ".".
//
// On restore the sink re-commits the restored pending parts (a part whose
// hidden file is gone and whose finished file is there was committed
// before; both gone is an error), truncates and resumes the in-progress
// parts, and removes what the restored state does not account for:
// hidden parts nobody refers to and finished parts numbered at or past the
// restored part counter, committed after the snapshot was taken. That is
// what makes savepoint, a later checkpoint, cancel, run -s exactly-once.
//
// The bucket/part state machine is Writer; the runtime adapter is sink.
// Every file operation goes through the job's vfs.FS, and the fault points
// "file.write", "file.precommit", "file.commit", "file.commit-done" and
// "file.restore" are offered to the job's fault hook.
package file
