package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/topics"
)

// chaosReport is the part of `flinkgo chaos -o json` the tests read.
type chaosReport struct {
	Injected, Fired                                 int
	Compared, Lost, Duplicated, Changed, Unexpected int
	Identical                                       bool
	Faults                                          []struct {
		Kind  string
		Fired bool
	}
	Sinks []struct {
		UID, Guarantee     string
		Compared, Received int
		Identical          bool
		Undisturbed        struct{ Dir, Topic string }
	}
	Disturbed struct{ State string }
}

func runChaos(t *testing.T, e *env, args ...string) (chaosReport, result) {
	t.Helper()
	r := e.run(append([]string{"chaos", "-o", "json"}, args...)...)
	var rep chaosReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	return rep, r
}

// A datagen → file job survives 5 kills and a stop → run -s with its
// committed files identical, row for row, to an undisturbed run's; the
// user's own output directory is not written.
func TestChaosFileSinkIdentical(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	userOut := filepath.Join(e.home, "user-out")
	spec := e.writeSpec("files.yaml", fmt.Sprintf(`name: chaos-files
parallelism: 2
checkpointing: {interval: 100ms}
operators:
  - {uid: numbers, type: datagen, count: 1500, rate: 1000}
  - {uid: double, type: map, from: [numbers], expr: '{"idx": idx, "twice": idx * 2}'}
  - {uid: out, type: file, from: [double], path: %s, rolling: {onCheckpoint: true}}
`, userOut))
	rep, r := runChaos(t, e, spec, "--kills", "5", "--stop-restore", "1", "--seed", "11")
	require.Equal(t, 0, r.code, "%s\n%s", r.stdout, r.stderr)
	assert.True(t, rep.Identical)
	assert.Equal(t, 6, rep.Injected)
	assert.GreaterOrEqual(t, rep.Fired, 5, "%+v", rep.Faults)
	require.Len(t, rep.Sinks, 1)
	assert.Equal(t, 1500, rep.Sinks[0].Compared)
	assert.Equal(t, 1500, rep.Sinks[0].Received)
	assert.Equal(t, "exactly-once", rep.Sinks[0].Guarantee)
	assert.Zero(t, rep.Lost+rep.Duplicated+rep.Changed+rep.Unexpected)
	_, err := os.Stat(userOut)
	assert.True(t, os.IsNotExist(err), "the user's output directory was written")
}

// A job reading a Kafka topic (to its current end) and a paced datagen
// source, writing a Kafka topic with transactions: identical committed
// (read_committed) records after 5 kills. The same job with an
// at-least-once sink reports the duplicates its replays wrote, and exits 1.
func TestChaosKafkaExactlyOnceAndAtLeastOnce(t *testing.T) {
	parallel(t)
	b := broker(t, "in", 2)
	_, err := produce.Run(context.Background(), produce.Config{Brokers: []string{b.Addr()}, Topic: "in", Count: 1000})
	require.NoError(t, err)
	e := newEnv(t)
	job := func(guarantee string) string {
		return e.writeSpec(guarantee+".yaml", fmt.Sprintf(`name: chaos-kafka
parallelism: 2
checkpointing: {interval: 100ms}
operators:
  - {uid: src, type: kafka, brokers: [%[1]s], topic: in, format: json}
  - {uid: gen, type: datagen, count: 1000, rate: 1000, start: 100001}
  - {uid: both, type: map, from: [src, gen], expr: '{"idx": idx, "odd": idx %% 2 == 1}'}
  - {uid: sink, type: kafka, from: [both], brokers: [%[1]s], topic: out, deliveryGuarantee: %[2]s}
`, b.Addr(), guarantee))
	}
	rep, r := runChaos(t, e, job("exactly-once"), "--kills", "5", "--seed", "5")
	require.Equal(t, 0, r.code, "%s\n%s", r.stdout, r.stderr)
	assert.True(t, rep.Identical)
	assert.GreaterOrEqual(t, rep.Fired, 5, "%+v", rep.Faults)
	require.Len(t, rep.Sinks, 1)
	assert.Equal(t, 2000, rep.Sinks[0].Compared)
	assert.Equal(t, "exactly-once", rep.Sinks[0].Guarantee)
	assert.NotEqual(t, "out", rep.Sinks[0].Undisturbed.Topic, "the user's topic was written")

	rep, r = runChaos(t, e, job("at-least-once"), "--kills", "5", "--seed", "5")
	require.Equal(t, 1, r.code, "%s\n%s", r.stdout, r.stderr)
	assert.False(t, rep.Identical)
	assert.Equal(t, "at-least-once", rep.Sinks[0].Guarantee)
	assert.Positive(t, rep.Duplicated, "%+v", rep)
	assert.Zero(t, rep.Lost, "an at-least-once sink loses nothing")
	assert.Greater(t, rep.Sinks[0].Received, rep.Sinks[0].Compared)

	// The runs' private topics are deleted; the input is as it was.
	list, err := topics.List(context.Background(), []string{b.Addr()})
	require.NoError(t, err)
	assert.Equal(t, []topics.Info{{Name: "in", Partitions: 2}}, list)
}

// A job whose output depends on the wall clock is named, operator and
// reason, and refused before anything runs (exit 3); an unbounded source
// is refused the same way, at its line; a spec that does not compile is
// refused as `flinkgo validate` refuses it.
func TestChaosRefusesWhatItCannotCompare(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	out := filepath.Join(e.home, "out")
	nondet := e.writeSpec("nondet.yaml", fmt.Sprintf(`name: nondet
operators:
  - {uid: gen, type: datagen, count: 100}
  - {uid: key, type: keyBy, from: [gen], expr: 'string(idx %% 3)'}
  - {uid: per-second, type: window, from: [key], time: processing, window: {type: tumbling, size: 1s}, aggregate: {n: count()}}
  - {uid: out, type: file, from: [per-second], path: %s}
`, out))
	r := e.run("chaos", nondet, "--kills", "5")
	require.Equal(t, 3, r.code, "%s\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "nondet.yaml:5:")
	assert.Contains(t, r.stderr, "operator per-second (window) is not deterministic: a processing-time window")
	assert.Contains(t, r.stderr, "--allow-nondeterministic")
	assert.NotContains(t, r.stderr, "undisturbed run", "nothing ran")

	unbounded := e.writeSpec("unbounded.yaml", fmt.Sprintf(`name: unbounded
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen, rate: 10}
  - {uid: out, type: file, from: [gen], path: %s}
`, out))
	r = e.run("chaos", unbounded, "--kills", "5")
	require.Equal(t, 3, r.code, "%s\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "unbounded.yaml:4:5: operators[0].count: source gen (datagen) is unbounded")

	bad := e.writeSpec("bad.yaml", "name: bad\noperators:\n  - {uid: gen, type: datagen, count: 10, rat: 5}\n")
	r = e.run("chaos", bad, "--kills", "5")
	require.Equal(t, 3, r.code, "%s\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "bad.yaml:3:")
	assert.Contains(t, r.stderr, `did you mean "rate"`)
}
