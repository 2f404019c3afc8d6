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
// aborted the savepoint's transactions. The dry run warns; the restore
// writes their records again from the topic instead of replaying the
// input from the beginning (or skipping them); a read_committed reader
// finds every record once.
func TestKafkaSavepointWithExpiredTransactions(t *testing.T) {
	parallel(t)
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(),
		Topics: []kafkabroker.Topic{{Name: "in", Partitions: 2}, {Name: "out", Partitions: 2}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	e := newEnv(t)
	e.startDaemon()
	const job = `
name: eo-expiry
parallelism: 2
checkpointing: {interval: %[2]s, timeout: 1s}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json, startingOffsets: earliest}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once, transactionTimeout: 12s}
`
	spec := e.writeSpec("eo.yaml", fmt.Sprintf(job, b.Addr(), "10s"))
	// The restore checkpoints sooner: its first checkpoint commits what it
	// writes again.
	quick := e.writeSpec("eo-quick.yaml", fmt.Sprintf(job, b.Addr(), "500ms"))
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

	restored := e.mustRun("run", "-s", sp, quick)
	require.True(t, waitFor(40*time.Second, func() bool { return verifyTopic(t, e, b.Addr(), "out").Distinct >= sent }), "every record committed")
	info := e.info(restored)
	assert.Equal(t, api.StateRunning, info.State, info.Error)
	logs := e.stderr.String() // the daemon's log
	assert.Contains(t, logs, "writing its records again from the topic")
	assert.False(t, strings.Contains(logs, "the beginning (no earlier checkpoint)"), "never falls back to the start of the input")
	e.mustRun("cancel", restored)
	r := verifyTopic(t, e, b.Addr(), "out")
	t.Logf("input %d records; output %d committed, %d distinct, %d missing", sent, r.Records, r.Distinct, r.GapCount)
	assert.Equal(t, sent, r.Distinct, "every record committed")
	assert.Zero(t, r.GapCount, "no record lost")
	assert.Equal(t, r.Distinct, r.Records, "no record committed twice")
}
