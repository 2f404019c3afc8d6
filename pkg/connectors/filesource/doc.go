// Package filesource is the file source (Flink's FileSource): it reads a
// file, or every file below a directory, on local disk or in object
// storage (s3://, through the job's vfs.FS), as JSON lines, CSV or text
// lines, and emits one record per JSON value, CSV row or line.
//
// Files are dealt to subtasks by a hash of their path (relative to the
// source's path), so every subtask lists the directory itself and reads
// only its own files: no coordinator, and the same file always goes to the
// same subtask at a given parallelism. A subtask reads its files one at a
// time, in path order.
//
// Position: the set of files read to the end, and the position (byte
// offset of the next record, records read) in the file being read, are
// union operator state. A restore, at any parallelism, gives each subtask
// every item and it keeps those of the files it now owns: a finished file
// is not read again, the current one resumes at the record after the last
// one emitted before the checkpoint's barrier. So a restore neither skips
// nor repeats a record.
//
// Bounded (no monitor option): the path is listed once when the subtask
// opens (again on each restore) and the subtask ends when its files are
// read. With monitor: d the path is listed every d, and a new file is read
// once it is complete by this rule: its name (and every directory name
// between the path and it) starts with neither '.' nor '_' (the hidden
// names writers use until they rename a finished file), and its size and
// modification time did not change between two listings, or it was last
// modified at least d ago. A file is read once: what is appended to it
// later is not read.
//
// Fault point (engine.Env.Fire): file.read (uid, subtask), before
// each Poll reads.
//
// Formats plug in through the Format and Reader interfaces (format.go): a
// Format opens a Reader on one file at a Position, and the Reader appends
// records to batches and says where the next one starts.
package filesource
