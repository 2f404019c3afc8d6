package file

import "testing"

func TestWriterRollsOnSizeAndCommitsOnCompletion(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 maxPartSize=8
	write w a r1 r2
	# buffered: nothing reached the file yet
	ls
	  a/.part-0-0.inprogress.x: 
	# 6 bytes: still in progress at the barrier, recorded with its length
	precommit w 1
	  in-progress a/.part-0-0.inprogress.x (6 bytes)
	  counters 0:1
	commit w 1
	ls
	  a/.part-0-0.inprogress.x: r1 r2
	# the 9th byte reaches maxPartSize: rolled, pending at the next barrier
	write w a r3 r4
	precommit w 2
	  pending a/part-0-0 (9 bytes, chk 2)
	  in-progress a/.part-0-1.inprogress.x (3 bytes)
	  counters 0:2
	ls
	  a/.part-0-0.inprogress.x: r1 r2 r3
	  a/.part-0-1.inprogress.x: r4
	commit w 2
	ls
	  a/.part-0-1.inprogress.x: r4
	  a/part-0-0: r1 r2 r3
	`)
}

func TestWriterOnCheckpointSavepointAndAbort(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 onCheckpoint
	write w a r1
	write w b r2
	precommit w 1
	  pending a/part-0-0 (3 bytes, chk 1)
	  pending b/part-0-1 (3 bytes, chk 1)
	  counters 0:2
	# checkpoint 1 is a savepoint (never notified) and 2 is aborted:
	# checkpoint 3 commits everything, as in Flink 1.15+
	write w a r3
	precommit w 2
	  pending a/part-0-0 (3 bytes, chk 1)
	  pending b/part-0-1 (3 bytes, chk 1)
	  pending a/part-0-2 (3 bytes, chk 2)
	  counters 0:3
	write w a r4
	precommit w 3
	  pending a/part-0-0 (3 bytes, chk 1)
	  pending b/part-0-1 (3 bytes, chk 1)
	  pending a/part-0-2 (3 bytes, chk 2)
	  pending a/part-0-3 (3 bytes, chk 3)
	  counters 0:4
	# a late notification of 2 commits only what is <= 2
	commit w 2
	ls
	  a/.part-0-3.inprogress.x: r4
	  a/part-0-0: r1
	  a/part-0-2: r3
	  b/part-0-1: r2
	commit w 3
	ls
	  a/part-0-0: r1
	  a/part-0-2: r3
	  a/part-0-3: r4
	  b/part-0-1: r2
	`)
}

func TestWriterTimePolicyAndOpenFileLimit(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 maxOpen=2 inactivity=1m rollover=5m
	write w a r1
	time +10s
	write w b r2
	# a third bucket: the least recently written one (a) is rolled
	time +10s
	write w c r3
	ls
	  a/.part-0-0.inprogress.x: r1
	  b/.part-0-1.inprogress.x: 
	  c/.part-0-2.inprogress.x: 
	precommit w 1
	  pending a/part-0-0 (3 bytes, chk 1)
	  in-progress b/.part-0-1.inprogress.x (3 bytes)
	  in-progress c/.part-0-2.inprogress.x (3 bytes)
	  counters 0:3
	# b is inactive for a minute; c keeps being written until its rollover
	time +55s
	write w c r4
	tick w
	precommit w 2
	  pending a/part-0-0 (3 bytes, chk 1)
	  pending b/part-0-1 (3 bytes, chk 2)
	  in-progress c/.part-0-2.inprogress.x (6 bytes)
	  counters 0:3
	commit w 2
	time +5m
	write w c r5
	tick w
	precommit w 3
	  pending c/part-0-2 (9 bytes, chk 3)
	  counters 0:3
	`)
}

func TestWriterRestoreRecommitsResumesAndCleansUp(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 maxPartSize=8
	write w a r1 r2 r3
	write w b r4
	precommit w 1
	  pending a/part-0-0 (9 bytes, chk 1)
	  in-progress b/.part-0-1.inprogress.x (3 bytes)
	  counters 0:2
	snap chk1 w
	# after the barrier: more data in b and a new part in a, pre-committed
	# by checkpoint 2, which never completes; the process crashes
	write w b r5
	write w a r6
	precommit w 2
	  pending a/part-0-0 (9 bytes, chk 1)
	  in-progress b/.part-0-1.inprogress.x (6 bytes)
	  in-progress a/.part-0-2.inprogress.x (3 bytes)
	  counters 0:3
	crash process
	ls
	  a/.part-0-0.inprogress.x: r1 r2 r3
	  a/.part-0-2.inprogress.x: r6
	  b/.part-0-1.inprogress.x: r4 r5
	# restore from checkpoint 1: its pending part is committed, b is cut
	# back to 3 bytes, the part written after the snapshot is removed
	writer w2 sub=0 par=1 maxPartSize=8 from=chk1
	ls
	  a/part-0-0: r1 r2 r3
	  b/.part-0-1.inprogress.x: r4
	write w2 b r7
	write w2 a r8
	precommit w2 2
	  in-progress b/.part-0-1.inprogress.x (6 bytes)
	  in-progress a/.part-0-2.inprogress.x (3 bytes)
	  counters 0:3
	finish w2
	precommit w2 3
	  pending b/part-0-1 (6 bytes, chk 3)
	  pending a/part-0-2 (3 bytes, chk 3)
	  counters 0:3
	commit w2 3
	ls
	  a/part-0-0: r1 r2 r3
	  a/part-0-2: r8
	  b/part-0-1: r4 r7
	`)
}

func TestWriterRestoreIsIdempotentAndLoudWhenFilesAreGone(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 onCheckpoint
	write w a r1
	write w b r2
	precommit w 1
	  pending a/part-0-0 (3 bytes, chk 1)
	  pending b/part-0-1 (3 bytes, chk 1)
	  counters 0:2
	snap chk1 w
	# committed once, the crash came after: restoring re-commits nothing
	commit w 1
	crash power
	ls
	  a/part-0-0: r1
	  b/part-0-1: r2
	writer w2 sub=0 par=1 from=chk1
	ls
	  a/part-0-0: r1
	  b/part-0-1: r2
	# twice is the same
	writer w3 sub=0 par=1 from=chk1
	# a committed file deleted by hand: hidden and finished both gone
	rm b/part-0-1
	writer w4 sub=0 par=1 from=chk1
	  error: restore: commit pending part file of checkpoint 1: neither /out/b/.part-0-1.inprogress.x nor /out/b/part-0-1 exists: its data is lost * part file missing
	`)
}

func TestWriterPowerLossKeepsWhatPreCommitSynced(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1
	write w 2024/05 r1 r2
	precommit w 1
	  in-progress 2024/05/.part-0-0.inprogress.x (6 bytes)
	  counters 0:1
	snap chk1 w
	write w 2024/05 r3
	write w 2024/06 r4
	crash power
	# only what pre-commit made durable is left: new directories and the
	# unsynced tail are gone
	ls
	  2024/05/.part-0-0.inprogress.x: r1 r2
	writer w2 sub=0 par=1 from=chk1
	finish w2
	precommit w2 2
	  pending 2024/05/part-0-0 (6 bytes, chk 2)
	  counters 0:1
	commit w2 2
	crash power
	ls
	  2024/05/part-0-0: r1 r2
	`)
}

// Savepoint, then a checkpoint completes, then cancel and run -s: the
// parts committed after the savepoint are deleted (or taken back when the
// savepoint had them in progress) and written again.
func TestWriterRestoreDeletesOutputCommittedAfterTheSnapshot(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 maxPartSize=8
	write w a r1 r2 r3
	write w b r4
	precommit w 1
	  pending a/part-0-0 (9 bytes, chk 1)
	  in-progress b/.part-0-1.inprogress.x (3 bytes)
	  counters 0:2
	snap savepoint w
	write w b r5 r6
	write w c r7
	finish w
	precommit w 2
	  pending a/part-0-0 (9 bytes, chk 1)
	  pending b/part-0-1 (9 bytes, chk 2)
	  pending c/part-0-2 (3 bytes, chk 2)
	  counters 0:3
	commit w 2
	ls
	  a/part-0-0: r1 r2 r3
	  b/part-0-1: r4 r5 r6
	  c/part-0-2: r7
	writer w2 sub=0 par=1 maxPartSize=8 from=savepoint
	ls
	  a/part-0-0: r1 r2 r3
	  b/.part-0-1.inprogress.x: r4
	`)
}

func TestWriterRefusesToOverwriteAFinishedFile(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 onCheckpoint
	write w - r1
	precommit w 1
	  pending part-0-0 (3 bytes, chk 1)
	  counters 0:1
	# a fresh writer sees the hidden part and takes the next number
	writer other sub=0 par=1 onCheckpoint
	write other - x1
	precommit other 1
	  pending part-0-1 (3 bytes, chk 1)
	  counters 0:2
	# something else took the finished name meanwhile: never clobbered
	put part-0-0 intruder
	commit w 1
	  error: commit /out/.part-0-0.inprogress.x: /out/part-0-0 exists and is not this part * finished part file name already taken
	ls
	  .part-0-0.inprogress.x: r1
	  .part-0-1.inprogress.x: x1
	  part-0-0: intruder
	`)
}

func TestWriterFreshStartContinuesAfterExistingParts(t *testing.T) {
	runScript(t, `
	writer w sub=1 par=2 onCheckpoint
	write w a r1 r2
	precommit w 1
	  pending a/part-1-0 (6 bytes, chk 1)
	  counters 1:1
	commit w 1
	write w b r3
	precommit w 2
	  pending b/part-1-1 (3 bytes, chk 2)
	  counters 1:2
	# a fresh job in the same directory never reuses a part number
	writer w2 sub=1 par=2 onCheckpoint
	write w2 a r4
	precommit w2 1
	  pending a/part-1-2 (3 bytes, chk 1)
	  counters 1:3
	# subtask 0 of a fresh job at parallelism 1 carries index 1 forward
	writer z sub=0 par=1 onCheckpoint
	write z a r5
	precommit z 1
	  pending a/part-0-0 (3 bytes, chk 1)
	  counters 0:1 1:3
	`)
}

// Rescale 4 → 2 → 4: pending and in-progress parts are dealt out, part
// counters of every index survive (subtask 0 carries those of indices
// that have no subtask), and no part number is ever used twice.
func TestWriterRescaleKeepsPartNumbersUnique(t *testing.T) {
	runScript(t, `
	writer a0 sub=0 par=4 maxPartSize=6
	writer a1 sub=1 par=4 maxPartSize=6
	writer a2 sub=2 par=4 maxPartSize=6
	writer a3 sub=3 par=4 maxPartSize=6
	write a0 x r1 r2 r3
	write a1 x r4 r5 r6
	write a2 x r7
	write a3 y r8 r9 r10
	precommit a0 1
	  pending x/part-0-0 (6 bytes, chk 1)
	  in-progress x/.part-0-1.inprogress.x (3 bytes)
	  counters 0:2
	precommit a1 1
	  pending x/part-1-0 (6 bytes, chk 1)
	  in-progress x/.part-1-1.inprogress.x (3 bytes)
	  counters 1:2
	precommit a2 1
	  in-progress x/.part-2-0.inprogress.x (3 bytes)
	  counters 2:1
	precommit a3 1
	  pending y/part-3-0 (6 bytes, chk 1)
	  in-progress y/.part-3-1.inprogress.x (4 bytes)
	  counters 3:2
	snap chk1 a0 a1 a2 a3
	# parallelism 2: subtask 0 gets part-0-0 and part-3-0 to commit, and the
	# in-progress parts of old subtasks 0 and 2, both in bucket x: the
	# second is rolled at once
	writer b0 sub=0 par=2 maxPartSize=6 from=chk1
	writer b1 sub=1 par=2 maxPartSize=6 from=chk1
	ls
	  x/.part-0-1.inprogress.x: r3
	  x/.part-1-1.inprogress.x: r6
	  x/.part-2-0.inprogress.x: r7
	  x/part-0-0: r1 r2
	  x/part-1-0: r4 r5
	  y/.part-3-1.inprogress.x: r10
	  y/part-3-0: r8 r9
	write b0 z s1
	write b1 z s2
	precommit b0 2
	  pending x/part-2-0 (3 bytes, chk 2)
	  in-progress x/.part-0-1.inprogress.x (3 bytes)
	  in-progress z/.part-0-2.inprogress.x (3 bytes)
	  counters 0:3 2:1 3:2
	precommit b1 2
	  in-progress x/.part-1-1.inprogress.x (3 bytes)
	  in-progress z/.part-1-2.inprogress.x (3 bytes)
	  in-progress y/.part-3-1.inprogress.x (4 bytes)
	  counters 1:3
	commit b0 2
	commit b1 2
	snap chk2 b0 b1
	writer c0 sub=0 par=4 maxPartSize=6 onCheckpoint from=chk2
	writer c1 sub=1 par=4 maxPartSize=6 onCheckpoint from=chk2
	writer c2 sub=2 par=4 maxPartSize=6 onCheckpoint from=chk2
	writer c3 sub=3 par=4 maxPartSize=6 onCheckpoint from=chk2
	write c0 w t0
	write c1 w t1
	write c2 w t2
	write c3 w t3
	finish c0
	finish c1
	finish c2
	finish c3
	precommit c0 3
	  pending x/part-0-1 (3 bytes, chk 3)
	  pending w/part-0-3 (3 bytes, chk 3)
	  pending y/part-3-1 (4 bytes, chk 3)
	  counters 0:4
	precommit c1 3
	  pending z/part-0-2 (3 bytes, chk 3)
	  pending w/part-1-3 (3 bytes, chk 3)
	  counters 1:4
	precommit c2 3
	  pending x/part-1-1 (3 bytes, chk 3)
	  pending w/part-2-1 (3 bytes, chk 3)
	  counters 2:2
	precommit c3 3
	  pending z/part-1-2 (3 bytes, chk 3)
	  pending w/part-3-2 (3 bytes, chk 3)
	  counters 3:3
	commit c0 3
	commit c1 3
	commit c2 3
	commit c3 3
	ls
	  w/part-0-3: t0
	  w/part-1-3: t1
	  w/part-2-1: t2
	  w/part-3-2: t3
	  x/part-0-0: r1 r2
	  x/part-0-1: r3
	  x/part-1-0: r4 r5
	  x/part-1-1: r6
	  x/part-2-0: r7
	  y/part-3-0: r8 r9
	  y/part-3-1: r10
	  z/part-0-2: s1
	  z/part-1-2: s2
	`)
}

func TestWriterResumeErrorsWhenInProgressDataIsGone(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1
	write w a r1 r2
	precommit w 1
	  in-progress a/.part-0-0.inprogress.x (6 bytes)
	  counters 0:1
	snap chk1 w
	close w
	put a/.part-0-0.inprogress.x r1
	writer w2 sub=0 par=1 from=chk1
	  error: resume /out/a/.part-0-0.inprogress.x: it has 3 bytes but the checkpoint made 6 durable: *(part file missing)
	rm a/.part-0-0.inprogress.x
	writer w3 sub=0 par=1 from=chk1
	  error: resume in-progress part file: neither /out/a/.part-0-0.inprogress.x nor /out/a/part-0-0 exists: * part file missing
	`)
}

func TestWriterEmptyPartIsNotCommitted(t *testing.T) {
	runScript(t, `
	writer w sub=0 par=1 maxPartSize=3
	# exactly maxPartSize: rolled right after the write
	write w a r1
	precommit w 1
	  pending a/part-0-0 (3 bytes, chk 1)
	  counters 0:1
	commit w 1
	precommit w 2
	  counters 0:1
	ls
	  a/part-0-0: r1
	`)
}
