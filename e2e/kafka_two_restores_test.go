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
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// With the real binary, two daemons (two homes, nothing shared but the
// brokers and the savepoint's path) both `run -s` one savepoint of a
// Kafka → Kafka exactly-once job. Each restored job writes under its own
// transactional-id prefix, so fencing would not stop the second; the
// sink's claim of the savepoint's prefix (the consumer group
// flinkgo-sink-owner.<prefix>) does: the second `run -s` fails, its job
// FAILED at once naming the first, and a read_committed reader finds
// every record once.
func TestKafkaSavepointRestoredByTwoDaemons(t *testing.T) {
	t.Parallel()
	start := time.Now()
	const before, after = 2000, 1000
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0",
		Topics: []kafkabroker.Topic{{Name: "in", Partitions: 2}, {Name: "out", Partitions: 2}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	produceSeq := func(from, n int64) {
		sent, err := produce.Run(context.Background(), produce.Config{Brokers: []string{b.Addr()}, Topic: "in", Start: from, Count: n})
		require.NoError(t, err)
		require.Equal(t, n, sent)
	}
	spec := fmt.Sprintf(`
name: eo-two-daemons
parallelism: 2
checkpointing: {interval: 100ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 50ms}
operators:
  - {uid: in, type: kafka, brokers: [%[1]s], topic: in, format: json, startingOffsets: earliest}
  - {uid: out, type: kafka, from: [in], brokers: [%[1]s], topic: out, deliveryGuarantee: exactly-once}
`, b.Addr())
	committed := func(e *env, n int64) bool { return verifyTopic(t, e, b.Addr(), "out").Distinct >= n }

	one, two := newEnv(t), newEnv(t)
	one.startDaemon()
	two.startDaemon()
	produceSeq(1, before)
	orig := one.mustRun("run", one.writeSpec("eo.yaml", spec))
	require.True(t, waitFor(30*time.Second, func() bool { return committed(one, before) }), "the first job commits its input")
	sp := one.mustRun("savepoint", orig, filepath.Join(one.home, "sp"))
	one.mustRun("cancel", orig)
	produceSeq(before+1, after) // what each restore would write after the savepoint

	first := two.mustRun("run", "-s", sp, two.writeSpec("eo.yaml", spec))
	require.True(t, waitFor(30*time.Second, func() bool { return committed(two, before+1) }), "the first restore commits after the savepoint")
	res := one.run("run", "-s", sp, one.writeSpec("eo.yaml", spec))
	second := strings.TrimSpace(res.stdout)
	assert.NotEqual(t, 0, res.code, "the second restore is refused: %s%s", res.stdout, res.stderr)
	require.True(t, waitFor(30*time.Second, func() bool { return committed(two, before+after) }), "the first restore commits everything")
	info := one.info(second)
	assert.Equal(t, api.StateFailed, info.State)
	assert.Equal(t, api.StateRunning, two.info(first).State)
	if info.State == api.StateRunning {
		time.Sleep(2 * time.Second) // what the second commits
		one.mustRun("cancel", second)
	}
	two.mustRun("cancel", first)

	r := verifyTopic(t, one, b.Addr(), "out")
	lost := max(before+after-r.Distinct, 0)
	t.Logf("input %d records; output %d committed, %d distinct, %d lost", before+after, r.Records, r.Distinct, lost)
	scorecard.Record(t, start, scorecard.Entry{Suite: "Kafka → Kafka exactly-once, one savepoint restored by two daemons, real binary",
		Faults: "a second daemon runs -s the savepoint a first daemon restored", Planned: 1, Fired: 1, Cases: 1,
		Records: r.Records, Lost: lost, Duplicated: r.Duplicates})
	for _, msg := range []string{res.stderr, info.Error} {
		assert.Contains(t, msg, "belong to job "+first)
		assert.Contains(t, msg, "flinkgo-sink-owner.")
	}
	assert.Zero(t, info.Restarts, "refused at once, without restarts")
	assert.Equal(t, int64(before+after), r.Distinct, "every record committed")
	assert.Equal(t, int64(1), r.First)
	assert.Zero(t, r.GapCount, "no record lost")
	assert.Zero(t, r.Duplicates, "no record committed twice")
}
