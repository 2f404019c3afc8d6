package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// TestSavepointWithExpiredTransactionIsWrittenAgain: a savepoint holds
// pre-committed transactions; the job is cancelled and the savepoint
// restored after transactionTimeout, when the broker has aborted them.
// Restoring it as it is would skip their records, and starting from the
// beginning (what the restore decision once did) would repeat everything
// committed before: the restore writes their records again from the
// topic, and the output holds every record once. (When those records
// are gone from the topic too, the restore is refused:
// TestAbortedTransactionWithRecordsGone, internal/checkpoint's
// testdata/restore/lost.txt.)
func TestSavepointWithExpiredTransactionIsWrittenAgain(t *testing.T) {
	start := time.Now()
	b := startBroker(t, "in:2", "out:2")
	spec := fmt.Sprintf(`
name: eo-expired-savepoint
parallelism: 2
checkpointing: {interval: 200ms, timeout: 1s}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 20ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, transactionTimeout: 1500ms}
`, b.Addr())
	p := startProducer(t, b.Addr(), "in", 2000)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, waitFor, "records committed", func() bool { return len(readValues(t, b.Addr(), "out", true)) > 500 })
	path, _, err := j.Savepoint(t.TempDir())
	require.NoError(t, err)
	runtimetest.Cancel(t, waitFor, j)
	n := p.stop(t)
	time.Sleep(5 * time.Second) // well past transactionTimeout: the broker aborts the savepoint's transactions

	// savepoint inspect shows the transactions and their timeout; the
	// dry run warns that they may have expired.
	r, err := engine.LoadRestore(vfs.Default, path)
	require.NoError(t, err)
	var pending int
	for _, h := range r.Meta.Operator("out").Subtasks {
		assert.Equal(t, "1.5s", h.Details["transactionTimeout"])
		pending += len(h.Details["pendingTransactions"].([]any))
	}
	assert.Positive(t, pending, "the savepoint holds pre-committed transactions")
	g, err := engine.Compile(runtimetest.Registry(t, testTypes), "job.yaml", []byte(spec), engine.Defaults{})
	require.NoError(t, err)
	plan := engine.PlanRestore(g, r, engine.RestoreOptions{})
	require.Len(t, plan.Warnings, 1)
	assert.Contains(t, plan.Warnings[0], `operator "out"`)
	assert.Contains(t, plan.Warnings[0], "may have expired")

	j = runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
	runtimetest.WaitUntil(t, waitFor, "every record committed", func() bool { return int64(len(readValues(t, b.Addr(), "out", true))) >= n })
	assert.Equal(t, api.StateRunning, j.Info().State, j.Info().Error)
	assert.Positive(t, operator(t, j, "out").Metrics["transactionsRewritten"])
	runtimetest.Cancel(t, waitFor, j)
	got := idxs(t, readValues(t, b.Addr(), "out", true))
	lost, dup := lostAndDuplicated(got, 1, n)
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka → Kafka exactly-once, savepoint restored after its transactions expired",
		Faults: "savepoint, cancel, restore after transactionTimeout (the broker aborted its transactions)", Planned: 1, Fired: 1, Cases: 1,
		Records: int64(len(got)), Lost: lost, Duplicated: dup})
	requireExactly(t, got, 1, n)
}

// TestTwoJobsRestoringOneSavepoint: two jobs (as two daemons would)
// restore one savepoint of a Kafka → Kafka exactly-once job. Each writes
// under its own transactional-id prefix, so fencing alone let both commit
// everything after the savepoint. The sink claims the savepoint's prefix:
// the first restore takes it over, the second is refused naming the
// owner, and the output holds every record once.
func TestTwoJobsRestoringOneSavepoint(t *testing.T) {
	start := time.Now()
	b := startBroker(t, "in:2", "out:2")
	produceIdx(t, b.Addr(), "in", 1, 3000)
	spec := fmt.Sprintf(`
name: eo-two-restores
parallelism: 2
checkpointing: {interval: 100ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 20ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once}
`, b.Addr())
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	runtimetest.WaitUntil(t, waitFor, "every record committed", func() bool { return len(readValues(t, b.Addr(), "out", true)) >= 3000 })
	path, _, err := j.Savepoint(t.TempDir())
	require.NoError(t, err)
	runtimetest.Cancel(t, waitFor, j)
	produceIdx(t, b.Addr(), "in", 3001, 2000) // after the savepoint: what both restores would write

	first := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
	runtimetest.WaitUntil(t, waitFor, "the first restore commits", func() bool { return len(readValues(t, b.Addr(), "out", true)) >= 5000 })
	second := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
	state := runtimetest.Wait(t, second, waitFor)
	time.Sleep(500 * time.Millisecond) // what the second might still commit
	runtimetest.Cancel(t, waitFor, first)
	got := idxs(t, readValues(t, b.Addr(), "out", true))
	lost, dup := lostAndDuplicated(got, 1, 5000)
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka → Kafka exactly-once, two jobs restoring one savepoint",
		Faults: "a second job restores the savepoint the first restored (as a second daemon would)", Planned: 1, Fired: 1, Cases: 1,
		Records: int64(len(got)), Lost: lost, Duplicated: dup})
	require.Equal(t, api.StateFailed, state)
	msg := second.Info().Error
	assert.Contains(t, msg, "belong to job "+first.ID())
	assert.Contains(t, msg, "flinkgo-sink-owner.")
	requireExactly(t, got, 1, 5000)
}
