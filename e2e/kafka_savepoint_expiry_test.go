package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// With the real binary: a Kafka → Kafka exactly-once job
// (checkpoints every 10 s, transactionTimeout 12s) is savepointed while records flow, cancelled,
// and its savepoint restored after the timeout, when the broker has
// aborted the savepoint's transactions. The dry run warns; the restore is
// FAILED naming the transaction instead of replaying the input from the
// beginning; a read_committed reader finds no record twice.
func TestKafkaSavepointWithExpiredTransactions(t *testing.T) {
	parallel(t)
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(),
		Topics: []kafkabroker.Topic{{Name: "in", Partitions: 2}, {Name: "out", Partitions: 2}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	e := newEnv(t)
	e.startDaemon()
	spec := e.writeSpec("eo.yaml", fmt.Sprintf(`
name: eo-expiry
parallelism: 2
checkpointing: {interval: 10s, timeout: 1s}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json, startingOffsets: earliest}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, transactionTimeout: 12s}
`, b.Addr()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int64)
	go func() {
		n, _ := produce.Run(ctx, produce.Config{Brokers: []string{b.Addr()}, Topic: "in", Rate: 1000})
		done <- n
	}()
	id := e.mustRun("run", spec)
	// Right after the first checkpoint committed: the next one, which
	// would commit the savepoint's transactions, is 10 s away.
	require.True(t, waitEvery(40*time.Second, checkEvery, func() bool { return verifyTopic(t, e, b.Addr(), "out").Distinct > 500 }), "records committed")
	sp := e.mustRun("savepoint", id, filepath.Join(e.home, "sp"))
	e.mustRun("cancel", id)
	cancel()
	sent := <-done
	time.Sleep(14 * time.Second) // past transactionTimeout

	dry := e.mustRun("run", "--dry-run", "-s", sp, spec)
	assert.Contains(t, dry, "WARNING")
	assert.Contains(t, dry, "may have expired")
	inspect := e.mustRun("savepoint", "inspect", sp)
	assert.Contains(t, inspect, "transactionTimeout")
	assert.Contains(t, inspect, "pendingTransactions")

	restored := e.mustRun("run", "-s", sp, spec)
	info := e.waitState(restored, api.StateFailed, 60*time.Second)
	assert.Contains(t, info.Error, "was lost before its commit")
	assert.Regexp(t, `transaction flinkgo-\S+ \(producer \d+, epoch \d+, \d+ records\)`, info.Error)
	assert.False(t, strings.Contains(e.mustRun("logs", restored), "the beginning (no earlier checkpoint)"), "never falls back to the start of the input")
	r := verifyTopic(t, e, b.Addr(), "out")
	t.Logf("input %d records; output %d committed, %d distinct", sent, r.Records, r.Distinct)
	assert.Equal(t, r.Distinct, r.Records, "no record committed twice")
}
