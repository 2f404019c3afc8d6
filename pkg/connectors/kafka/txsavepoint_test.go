package kafka_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// TestSavepointWithExpiredTransactionIsRefused: a savepoint holds
// pre-committed transactions; the job is cancelled and the savepoint
// restored after transactionTimeout, when the broker has aborted them.
// Restoring it would skip their records, and starting from the beginning
// (what the restore decision did) would repeat everything committed
// before: the job fails at once, naming the transaction and its records,
// and the output holds no record twice.
func TestSavepointWithExpiredTransactionIsRefused(t *testing.T) {
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
	plan := engine.PlanRestore(g, r, false)
	require.Len(t, plan.Warnings, 1)
	assert.Contains(t, plan.Warnings[0], `operator "out"`)
	assert.Contains(t, plan.Warnings[0], "may have expired")

	j = runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
	msg := j.Info().Error
	assert.Contains(t, msg, "was lost before its commit")
	assert.Regexp(t, `transaction flinkgo-\S+-out-\d+-\d+ \(producer \d+, epoch \d+, \d+ records\)`, msg, "names the transaction and its records")
	assert.Contains(t, msg, "flinkgo stop")
	got := idxs(t, readValues(t, b.Addr(), "out", true))
	_, dup := lostAndDuplicated(got, 1, n)
	assert.Zero(t, dup, "no record committed twice")
}
