package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// broker starts an embedded Kafka broker with a persisted data dir.
func broker(t *testing.T, topic string, partitions int) *kafkabroker.Broker {
	b, err := kafkabroker.Start(kafkabroker.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(),
		Topics: []kafkabroker.Topic{{Name: topic, Partitions: partitions}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func kafkaToFiles(brokerAddr, topic, out string, par int, extra string) string {
	return fmt.Sprintf(`
name: kafka-to-files
parallelism: %d
checkpointing: {interval: 200ms}
restartStrategy: {type: fixed-delay, attempts: 20, delay: 100ms}
operators:
  - {uid: source, type: kafka, brokers: [%s], topic: %s, groupId: e2e, format: json%s}
  - {uid: files, type: file, from: [source], path: %s, bucket: yyyy-MM-dd--HH-mm, rolling: {onCheckpoint: true}}
`, par, brokerAddr, topic, extra, out)
}

func requireExactly(t *testing.T, out string, n int64) {
	t.Helper()
	r, err := verify.Run(verify.Options{Path: out, Field: "idx"})
	require.NoError(t, err)
	require.Truef(t, r.OK() && r.Records == n && r.First == 1 && r.Last == n,
		"%d records, %d..%d, %d missing in %v, %d duplicates (e.g. %v)", r.Records, r.First, r.Last, r.GapCount, r.Gaps, r.Duplicates, r.DuplicateSamples)
}

// Kafka → file through the real binary: 4 partitions x 25,000 records,
// task failures injected (in commits and in the source) and one kill -9 of
// the daemon mid-run; the finished files hold every record exactly once.
func TestKafkaToFilesExactlyOnceWithFailuresAndKill(t *testing.T) {
	parallel(t)
	const total = 100_000
	b := broker(t, "seq", 4)
	sent, err := produce.Run(context.Background(), produce.Config{Brokers: []string{b.Addr()}, Topic: "seq", Count: total})
	require.NoError(t, err)
	require.Equal(t, int64(total), sent)

	e := newEnv(t)
	// Faults: commits and polls fail a few times; every poll is slowed by
	// 20ms so the daemon is killed in the middle of the run.
	e.extra = []string{"FLINKGO_FAULTS=file.commit:error,nth=5,every=9,times=3;kafka.poll:error,nth=40,times=2;kafka.poll:delay,every=1,times=1000000,delay=20ms"}
	e.startDaemon()
	out := filepath.Join(e.home, "out")
	// Bounded at the end offsets seen at start: the job finishes.
	id := e.mustRun("run", e.writeSpec("k.yaml", kafkaToFiles(b.Addr(), "seq", out, 2, ", bounded: latest")))
	deadline := time.Now().Add(30 * time.Second)
	// Kill once a checkpoint completed and the job runs (an injected fault
	// may have it RESTARTING for a moment).
	for {
		info := e.info(id)
		require.False(t, info.State.Terminal(), "the kill must hit a running job: %+v", info)
		if info.Checkpoints != nil && info.Checkpoints.Completed >= 1 && info.State == api.StateRunning {
			break
		}
		require.True(t, time.Now().Before(deadline), "no checkpoint: %+v", info)
		time.Sleep(20 * time.Millisecond)
	}
	fired := strings.Count(e.stderr.String(), "injected fault: kafka.poll error") + strings.Count(e.stderr.String(), "injected fault: file.commit error")
	e.killDaemon()
	e.extra = nil
	e.startDaemon()
	info := e.waitState(id, api.StateFinished, 60*time.Second)
	t.Logf("faults fired before the kill: %d, restarts after it: %d", fired, info.Restarts)
	requireExactly(t, out, total)
}

// The blog post's experiment with assertions: without a savepoint a
// restart from latest offsets loses records; with savepoint, cancel and
// run -s the output has no gap and no duplicate.
func TestSavepointExperiment(t *testing.T) {
	parallel(t)
	b := broker(t, "flink-test", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = produce.Run(ctx, produce.Config{Brokers: []string{b.Addr()}, Topic: "flink-test", Rate: 3000})
	}()
	e := newEnv(t)
	e.startDaemon()
	sp := filepath.Join(e.home, "savepoints")
	waitRecords := func(out string, n int64) {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if r, err := verify.Run(verify.Options{Path: out, Field: "idx"}); err == nil && r.Records >= n {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: fewer than %d records committed", out, n)
	}

	// (a) cancel, then restart without a savepoint from latest offsets.
	a := filepath.Join(e.home, "a")
	id := e.mustRun("run", e.writeSpec("a1.yaml", kafkaToFiles(b.Addr(), "flink-test", a, 1, "")))
	waitRecords(a, 2000)
	e.mustRun("cancel", id)
	time.Sleep(time.Second)
	// Into the same directory on purpose, to show the gap: a new job
	// writes into existing output only when allowed.
	id = e.mustRun("run", "--allow-non-empty-output", e.writeSpec("a2.yaml", kafkaToFiles(b.Addr(), "flink-test", a, 1, ", startingOffsets: latest")))
	waitRecords(a, 5000)
	e.mustRun("cancel", id)
	r, err := verify.Run(verify.Options{Path: a, Field: "idx"})
	require.NoError(t, err)
	require.Greater(t, r.GapCount, int64(1000), "restarting from latest offsets skips what was produced meanwhile")

	// (b) savepoint, cancel, run -s, stop: no gap and no duplicate.
	bdir := filepath.Join(e.home, "b")
	spec := e.writeSpec("b.yaml", kafkaToFiles(b.Addr(), "flink-test", bdir, 1, ""))
	id = e.mustRun("run", spec)
	waitRecords(bdir, 2000)
	path := e.mustRun("savepoint", id, sp)
	e.mustRun("cancel", id)
	time.Sleep(time.Second)
	id = e.mustRun("run", "-s", path, spec)
	require.Equal(t, path, e.info(id).RestoredFrom)
	r, err = verify.Run(verify.Options{Path: bdir, Field: "idx"})
	require.NoError(t, err)
	waitRecords(bdir, r.Records+3000)
	stopped := e.mustRun("stop", id, "--savepoint-path", sp)
	require.DirExists(t, stopped)
	r, err = verify.Run(verify.Options{Path: bdir, Field: "idx"})
	require.NoError(t, err)
	require.True(t, r.OK(), "gaps %v, duplicates %d", r.Gaps, r.Duplicates)
	require.Equal(t, int64(1), r.First)
	require.Equal(t, r.Last, r.Records)
}
