package jobchaos

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func analyze(t *testing.T, spec string) (*Job, error) {
	t.Helper()
	reg := all.Registry()
	g, err := engine.Compile(reg, "job.yaml", []byte(spec), engine.Defaults{})
	require.NoError(t, err)
	return Analyze(g, "job.yaml", []byte(spec), reg)
}

// A source chaos cannot replay twice the same way, or an unbounded one, is
// refused at its line, saying what to do.
func TestUnreplayableSourcesAreRefused(t *testing.T) {
	_, err := analyze(t, `name: j
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen}
  - {uid: nx, type: nexmark}
  - {uid: k, type: kafka, brokers: [127.0.0.1:9092], topic: t, startingOffsets: committed, groupId: g}
  - {uid: q, type: nats, url: "nats://127.0.0.1:4222", stream: s, mode: bookmark}
  - {uid: dir, type: file, path: /tmp/in, format: lines, monitor: 10s}
  - {uid: files, type: file, path: /tmp/in, format: lines}
  - {uid: out, type: file, from: [gen, nx, k, q, dir, files], path: /tmp/x}
`)
	var se *api.SpecError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Len(t, se.Errors, 5, "%v", err)
	assert.Contains(t, err.Error(), "source dir (file) monitors its path")
	msg := err.Error()
	assert.Contains(t, msg, "job.yaml:4:5: operators[0].count: source gen (datagen) is unbounded")
	assert.Contains(t, msg, "source nx (nexmark) is unbounded")
	assert.Contains(t, msg, "source k (kafka) starts at its group's committed offsets")
	assert.Contains(t, msg, "source q is of type nats, which chaos cannot replay")
}

// Processing-time windows, now() and watermarks that follow the wall clock
// are named, with the operator and why.
func TestNondeterministicOperatorsAreNamed(t *testing.T) {
	j, err := analyze(t, `name: j
parallelism: 1
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen, count: 10, format: events, eventTime: {timestamp: ts, maxOutOfOrderness: 1s, idleTimeout: 5s}}
  - {uid: stamp, type: map, from: [gen], expr: '{"idx": idx, "at": now().Unix()}'}
  - {uid: key, type: keyBy, from: [stamp], expr: 'string(idx % 3)'}
  - {uid: w, type: window, from: [key], time: processing, window: {type: tumbling, size: 1s}, aggregate: {n: count()}}
  - {uid: out, type: file, from: [w], path: /tmp/x}
`)
	require.NoError(t, err)
	var ops []string
	for _, f := range j.Nondeterministic {
		ops = append(ops, f.Operator+": "+f.Why)
	}
	all := strings.Join(ops, "\n")
	assert.Contains(t, all, "gen: a split quiet for idleTimeout")
	assert.Contains(t, all, "stamp: expr calls now()")
	assert.Contains(t, all, "w: a processing-time window")
	assert.Len(t, ops, 3, all)
	msg := j.NondeterministicError().Error()
	assert.Contains(t, msg, "job.yaml:8:41: operators[3].time: operator w (window) is not deterministic: a processing-time window")
	assert.Contains(t, msg, "--allow-nondeterministic runs it anyway")
}

// A running count fed by several source subtasks emits intermediate
// results in an order timing decides.
func TestRunningCountOverParallelSourcesIsNamed(t *testing.T) {
	j, err := analyze(t, `name: j
parallelism: 2
operators:
  - {uid: gen, type: datagen, count: 10}
  - {uid: key, type: keyBy, from: [gen], expr: 'string(idx % 3)'}
  - {uid: n, type: count, from: [key]}
  - {uid: out, type: file, from: [n], path: /tmp/x}
`)
	require.NoError(t, err)
	require.Len(t, j.Nondeterministic, 1)
	assert.Equal(t, "n", j.Nondeterministic[0].Operator)
	assert.Contains(t, j.Nondeterministic[0].Why, "from 2 source subtasks")
}

// Each run writes private outputs: file sinks into the run's directory,
// Kafka sinks into a topic of the run with transactional ids of the run;
// Kafka sources stop at the topic's end and use a group of the run.
func TestRewriteRedirectsOutputs(t *testing.T) {
	j, err := analyze(t, `name: j
checkpointing: {interval: 1s}
operators:
  - {uid: k, type: kafka, brokers: [127.0.0.1:9092], topic: in, groupId: mine}
  - {uid: files, type: file, from: [k], path: /data/out}
  - {uid: eo, type: kafka, from: [k], brokers: [127.0.0.1:9092], topic: out, deliveryGuarantee: exactly-once}
  - {uid: alo, type: kafka, from: [k], brokers: [127.0.0.1:9092], topic: out2}
  - {uid: p, type: print, from: [k]}
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.1:9092"}, j.Sinks[1].Brokers)
	assert.Equal(t, ExactlyOnce, j.Sinks[1].Guarantee)
	assert.Equal(t, AtLeastOnce, j.Sinks[2].Guarantee)
	assert.Contains(t, j.Ignored["p"], "print")
	src, outs, err := j.Rewrite("disturbed", "/w/out", "n1")
	require.NoError(t, err)
	assert.Equal(t, Output{Dir: "/w/out/files"}, outs["files"])
	assert.Equal(t, Output{Topic: "out.chaos-n1-disturbed"}, outs["eo"])
	var doc struct {
		Operators []map[string]any `yaml:"operators"`
	}
	require.NoError(t, yaml.Unmarshal(src, &doc), string(src))
	assert.Equal(t, "latest", doc.Operators[0]["bounded"])
	assert.Equal(t, "flinkgo-chaos-n1-disturbed-k", doc.Operators[0]["groupId"])
	assert.Equal(t, "/w/out/files", doc.Operators[1]["path"])
	assert.Equal(t, "flinkgo-chaos-n1-disturbed-eo", doc.Operators[2]["transactionalIdPrefix"])
	assert.NotContains(t, doc.Operators[3], "transactionalIdPrefix")
	_, err = engine.Compile(all.Registry(), "job.yaml", src, engine.Defaults{})
	require.NoError(t, err, string(src))
}

// Rows compare as multisets: lost, duplicated, changed (a lost and an
// unexpected row alike in most fields) and unexpected.
func TestDiff(t *testing.T) {
	want := map[string]int{`{"id":1,"n":1}`: 1, `{"id":2,"n":1}`: 1, `{"id":3,"n":5}`: 1, `x`: 1}
	got := map[string]int{`{"id":1,"n":1}`: 3, `{"id":3,"n":6}`: 1, `x`: 1, `y`: 1}
	var sr SinkReport
	diff(&sr, want, got)
	assert.Equal(t, 4, sr.Compared)
	assert.Equal(t, 6, sr.Received)
	assert.Equal(t, 2, sr.Duplicated)
	assert.Equal(t, 1, sr.Lost)
	assert.Equal(t, 1, sr.Changed)
	assert.Equal(t, 1, sr.Unexpected)
	assert.False(t, sr.Identical)
	assert.Equal(t, []Change{{Expected: `{"id":3,"n":5}`, Received: `{"id":3,"n":6}`}}, sr.ChangedRows)
	assert.Equal(t, `{"a":1,"b":2}`, canonicalRow(nil, []byte(`{"b":2, "a":1}`)))
	assert.Equal(t, `key "k" text`, canonicalRow([]byte("k"), []byte("text")))

	sr = SinkReport{}
	diff(&sr, want, want)
	assert.True(t, sr.Identical)
}
