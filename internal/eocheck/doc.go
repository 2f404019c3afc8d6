// Package eocheck is the exactly-once checker shared by the fault tests.
//
// Input records carry their identity: the split (a partition of the input)
// they come from, their sequence number within it and a checksum of both,
// encoded as one JSON object per record,
//
//	{"split":3,"seq":1042,"crc":"5d3b1f0e"}
//
// (datagen.AppendChecked writes it; the datagen source emits it with
// format: checked). An
// Expectation says which (split, seq) pairs the input held; Check reads
// only the committed output of a file sink — finished files, skipping every
// file and directory whose name starts with "." (in-progress and pending
// part files are hidden) — and reports, per split, what was lost,
// duplicated, out of order, corrupt or unexpected. Checker takes lines from
// any other output (a topic, a stream) the same way.
//
// Out of order has a narrow meaning because a file sink gives no order
// across files: records of one split are out of order when, within one
// file, a record's sequence number is lower than that of an earlier record
// of the same split in that file. A subtask writes a file from a single
// ordered stream, and a split is read by one source subtask at a time, so a
// restore (which starts new part files) never makes this legal. Equal
// numbers are duplicates, not disorder.
package eocheck
