package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// stopCrash makes the daemon exit inside `stop`, just after the file sink
// committed the stop-with-savepoint's files and before the job is recorded
// FINISHED, then restarts it and checks the output is still exactly once.
// With checkpoints > 0 a periodic checkpoint completes first, so the
// restart restores from it; with 0 none does and the job starts over.
func stopCrash(t *testing.T, checkpoints int) (committed, records, duplicates int64) {
	const total = 12_000
	b := broker(t, "seq", 1)
	prod := make(chan error, 1)
	go func() {
		_, err := produce.Run(context.Background(), produce.Config{Brokers: []string{b.Addr()}, Topic: "seq", Count: total, Rate: 2000})
		prod <- err
	}()
	e := newEnv(t)
	// file.commit-done is reached once per completed checkpoint (parallelism
	// 1): the stop's is the one after the periodic ones.
	e.extra = []string{fmt.Sprintf("FLINKGO_FAULTS=file.commit-done:exit,nth=%d", checkpoints+1)}
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	interval := "1h"
	if checkpoints > 0 {
		interval = "2s"
	}
	id := e.mustRun("run", e.writeSpec("k.yaml", fmt.Sprintf(`
name: stop-crash
checkpointing: {interval: %s}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 100ms}
operators:
  - {uid: source, type: kafka, brokers: [%s], topic: seq, groupId: e2e, format: json}
  - {uid: files, type: file, from: [source], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, interval, b.Addr(), out)))
	require.True(t, waitFor(20*time.Second, func() bool {
		info, err := e.jobInfo(id)
		return err == nil && info.Checkpoints != nil && info.Checkpoints.Completed >= checkpoints
	}), "no checkpoint")
	// Records after the checkpoint: 1,000 more read (half a second of
	// input) for the stop to commit.
	read := e.info(id).Operators[0].RecordsOut
	require.True(t, waitFor(20*time.Second, func() bool {
		info, err := e.jobInfo(id)
		return err == nil && info.Operators[0].RecordsOut >= read+1000
	}), "no records after the checkpoint")
	r := e.run("stop", id, "--savepoint-path", filepath.Join(e.home, "sp"))
	require.Equal(t, 5, r.code, "the daemon exits in the stop's commit: %s%s", r.stdout, r.stderr)
	require.Contains(t, e.stderr.String(), "injected fault: file.commit-done exit")
	rep, err := verify.Run(verify.Options{Path: out, Field: "idx"})
	require.NoError(t, err)
	committed = rep.Records
	require.Positive(t, committed, "the stop committed nothing before the crash")
	_, err = e.crash()
	require.ErrorContains(t, err, "exit status 137")

	e.extra = nil
	e.startDaemon()
	require.NoError(t, <-prod)
	if e.info(id).State == api.StateRunning {
		// Wait until the source is idle: the job has read the whole topic.
		var last int64 = -1
		idleSince := time.Now()
		require.True(t, waitFor(60*time.Second, func() bool {
			info, err := e.jobInfo(id)
			if err != nil || len(info.Operators) == 0 {
				return false
			}
			if n := info.Operators[0].RecordsOut; n != last {
				last, idleSince = n, time.Now()
			}
			return last > 0 && time.Since(idleSince) > time.Second
		}), "the resumed job did not catch up")
		e.mustRun("stop", id, "--savepoint-path", filepath.Join(e.home, "sp"))
	}
	rep, err = verify.Run(verify.Options{Path: out, Field: "idx"})
	require.NoError(t, err)
	requireNoPanic(t, "daemon log", e.stderr.String())
	require.Truef(t, rep.OK() && rep.First == 1 && rep.Last == total, "%d of the %d records the stop committed were committed again after the crash (e.g. %v); gaps %v",
		rep.Duplicates, committed, rep.DuplicateSamples, rep.Gaps)
	return committed, rep.Records, rep.Duplicates
}

// A crash inside stop-with-savepoint after its commit, with a periodic
// checkpoint before it: the restart restores that checkpoint and the output
// stays exactly once.
func TestStopWithSavepointCrashAfterCommit(t *testing.T) {
	parallel(t)
	start := time.Now()
	committed, records, dups := stopCrash(t, 1)
	t.Logf("the stop committed %d records before the crash; %d records in the end, %d duplicated", committed, records, dups)
	scorecard.Record(t, start, scorecard.Entry{Suite: "crash inside stop-with-savepoint after its commit, real binary",
		Faults: "file.commit-done:exit in the stop", Planned: 1, Fired: 1, Cases: 1, Records: records, Duplicated: dups})
}

// The same crash when no periodic checkpoint completed before the stop:
// the restart starts the job from the beginning and commits everything the
// stop committed a second time. resume() only looks at periodic
// checkpoints; a stop-with-savepoint commits sink output but is not a
// recovery point (a Final checkpoint is, through PersistFinal).
func TestStopWithSavepointCrashAfterCommitBeforeFirstCheckpoint(t *testing.T) {
	parallel(t)
	stopCrash(t, 0)
}
