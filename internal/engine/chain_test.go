package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// chainSpec: a filter, a map and a keyBy that chain to the source, a keyed
// count that cannot (unless par is 1), and a sink at parallelism 1 that
// reads it rebalanced (forward at par 1).
func chainSpec(name string, par, count int, chaining bool) string {
	return fmt.Sprintf(`
name: chained
parallelism: %d
chaining: %v
checkpointing: {interval: 50ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 60000}
  - {uid: odd, type: filter, from: [gen], expr: "idx %% 3 != 0"}
  - {uid: tag, type: map, from: [odd], expr: "{idx: idx, k: idx %% 11}"}
  - {uid: key, type: keyBy, from: [tag], expr: "k"}
  - {uid: cnt, type: count, from: [key]}
  - {uid: out, type: test-collect, from: [cnt], name: %s, parallelism: 1}
`, par, chaining, count, name)
}

func chainedTo(info api.JobInfo) map[string]string {
	m := map[string]string{}
	for _, op := range info.Operators {
		m[op.UID] = op.ChainedTo
	}
	return m
}

// A chained job computes what the same job unchained does, operator by
// operator: the same records in and out, and the same counts. Only the
// operators that read their producer one to one and keep no state chain;
// at parallelism 1 a keyed operator without timers (count) reads its
// keyBy one to one and chains too.
func TestChainedJobMatchesUnchained(t *testing.T) {
	const total = 30000
	for _, par := range []int{2, 1} {
		records := map[bool]map[string][2]int64{}
		for _, chaining := range []bool{false, true} {
			name := runtimetest.UniqueName(t)
			j := runtimetest.Start(t, chainSpec(name, par, total, chaining), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
			info := j.Info()
			want := map[string]string{"gen": "", "odd": "", "tag": "", "key": "", "cnt": "", "out": ""}
			if chaining {
				want["odd"], want["tag"], want["key"] = "gen", "gen", "gen"
				if par == 1 { // and the sink reads it one to one
					want["cnt"], want["out"] = "gen", "gen"
				}
			}
			require.Equal(t, want, chainedTo(info), "parallelism %d", par)
			records[chaining] = map[string][2]int64{}
			for _, op := range info.Operators {
				records[chaining][op.UID] = [2]int64{op.RecordsIn, op.RecordsOut}
			}
			sum := 0
			for _, n := range runtimetest.MaxCounts(t, runtimetest.Values(name)) {
				sum += n
			}
			require.Equal(t, total-total/3, sum)
			require.NotZero(t, info.Checkpoints.Completed, "checkpoints complete through the chain")
		}
		require.Equal(t, records[false], records[true], "parallelism %d", par)
	}
}

// Chaining is not part of a snapshot: a job stopped with a savepoint
// chained restores unchained at another parallelism and chained again,
// every record counted once; at parallelism 1 the keyed count is in the
// chain, its state saved and restored on the source's goroutine.
func TestChainingAcrossStopAndRestore(t *testing.T) {
	const total = 60000
	name := runtimetest.UniqueName(t)
	spDir, path := t.TempDir(), ""
	for i, run := range []struct {
		par      int
		chaining bool
	}{{2, true}, {1, true}, {3, false}, {1, true}} {
		j := runtimetest.Start(t, chainSpec(name, run.par, total, run.chaining), runtimetest.Options{Types: testTypes,
			CheckpointsDir: t.TempDir(), SavepointsDir: spDir, Restore: path})
		if i < 3 {
			waitRead(t, j, total/10)
			var err error
			path, _, err = j.Stop("", false)
			require.NoError(t, err)
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second), j.Info().Error)
			continue
		}
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
	}
	sum := 0
	for _, n := range runtimetest.MaxCounts(t, runtimetest.Values(name)) {
		sum += n
	}
	require.Equal(t, total-total/3, sum)
}

// A chained operator fails as itself: the poison record is reported for
// the filter, not for the source whose goroutine ran it, and the error
// side output of a chained operator reaches its reader.
func TestChainedOperatorFailsAsItself(t *testing.T) {
	name := runtimetest.UniqueName(t)
	spec := "chaining: true\n" + poisonSpec(name, "", "")
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, 20*time.Second))
	info := j.Info()
	assert.Equal(t, "in", chainedTo(info)["f"])
	assert.Contains(t, info.Error, "operator f failed on the same record again after a restart")

	name = runtimetest.UniqueName(t)
	spec = "chaining: true\n" + poisonSpec(name, ", onError: sideOutput",
		fmt.Sprintf("  - {uid: bad, type: test-collect, from: [f.errors], name: %s-bad}\n", name))
	j = runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	assert.Len(t, runtimetest.Values(name), 99)
	assert.Len(t, runtimetest.Values(name+"-bad"), 1)
	assert.Equal(t, map[string]string{"in": "", "f": "in", "out": "in", "bad": ""}, chainedTo(j.Info()))
}

// openFaults fails the opening of operator uid the first n times.
type openFaults struct {
	uid string
	n   atomic.Int32
}

func (f *openFaults) Fire(point string, attrs ...any) error {
	if point == "task.open" && len(attrs) > 0 && attrs[0] == f.uid && f.n.Add(-1) >= 0 {
		return errors.New("injected: open fails")
	}
	return nil
}

// A chain whose head or member fails to open ends every subtask of the
// chain, and the restarted job runs to the end: 20 failed openings of the
// source, then 20 of a chained filter.
func TestChainFailingToOpenRestarts(t *testing.T) {
	for _, uid := range []string{"in", "f"} {
		name := runtimetest.UniqueName(t)
		spec := "chaining: true\n" + strings.Replace(poisonSpec(name, ", onError: skip", ""), "attempts: 100, delay: 10ms", "attempts: 100, delay: 1ms", 1)
		faults := &openFaults{uid: uid}
		faults.n.Store(20)
		j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Faults: faults})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
		assert.Equal(t, 20, j.Info().Restarts, uid)
		assert.Len(t, runtimetest.Values(name), 99, uid)
	}
}

// panicOp panics in Open, Process (on the record with idx 30) or Close,
// as where says; closed counts its Close calls.
type panicOp struct {
	where  string
	closed *atomic.Int32
}

func (p panicOp) Open(*runtime.Context) error {
	if p.where == "open" {
		panic("boom in open")
	}
	return nil
}

func (p panicOp) Close() error {
	p.closed.Add(1)
	if p.where == "close" {
		panic("boom in close")
	}
	return nil
}

func (p panicOp) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		if p.where == "process" && string(r.Value) == `{"idx": 30}` {
			panic("boom in process")
		}
		out.Emit(r)
	}
	return nil
}

// A panic in a chained operator, in Open, Process or Close, fails the job
// naming that operator, not the source whose goroutine it ran on, and
// every operator of the chain is still closed once (the one after it too).
func TestChainedOperatorPanicsAsItself(t *testing.T) {
	for _, where := range []string{"open", "process", "close"} {
		var closedBoom, closedNext atomic.Int32
		defs := append(slices.Clone(testTypes),
			runtime.Definition{Type: "test-panic", Kind: api.KindOperator, Doc: "test only",
				Configure: func(c *runtime.ConfigContext) *runtime.Plan {
					c.Decode(&struct{}{})
					return &runtime.Plan{NewOperator: func() runtime.Operator { return panicOp{where: where, closed: &closedBoom} }}
				}},
			runtime.Definition{Type: "test-closes", Kind: api.KindOperator, Doc: "test only",
				Configure: func(c *runtime.ConfigContext) *runtime.Plan {
					c.Decode(&struct{}{})
					return &runtime.Plan{NewOperator: func() runtime.Operator { return panicOp{closed: &closedNext} }}
				}})
		j := runtimetest.Start(t, `
name: panics
chaining: true
operators:
  - {uid: in, type: datagen, count: 100, rate: 2000}
  - {uid: boom, type: test-panic, from: [in]}
  - {uid: next, type: test-closes, from: [boom]}
  - {uid: out, type: discard, from: [next]}
`, runtimetest.Options{Types: defs})
		require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, 20*time.Second), where)
		info := j.Info()
		assert.Equal(t, "in", chainedTo(info)["boom"], where)
		assert.Contains(t, info.Error, "operator boom subtask 0: panic: boom in "+where, where)
		assert.EqualValues(t, 1, closedBoom.Load(), "%s: boom closed once", where)
		if where != "open" { // a panic in boom's Open stops the chain before next opens
			assert.EqualValues(t, 1, closedNext.Load(), "%s: next closed once", where)
		}
	}
}

// ttlSpec: keyed event-time records through a reduce with a ttl (a
// WatermarkListener without timers) that counts each user's records and
// starts again after a gap longer than the ttl.
func ttlSpec(name string, chaining bool) string {
	return fmt.Sprintf(`
name: chained-ttl
parallelism: 1
chaining: %v
checkpointing: {interval: 50ms}
watermarkInterval: 5ms
operators:
  - {uid: gen, type: datagen, format: events, count: %d, rate: 100000, keys: 20, step: 10ms, eventTime: {maxOutOfOrderness: 0s}}
  - {uid: key, type: keyBy, from: [gen], expr: user}
  - {uid: runs, type: reduce, from: [key], init: "{n: 0}", expr: "{user: user, idx: idx, n: acc.n + 1}", ttl: 500ms}
  - {uid: out, type: test-collect, from: [runs], name: %s}
`, chaining, ttlRecords, name)
}

const ttlRecords = 20000

// A reduce with a ttl hears the watermark, and chains all the same: chained
// and unchained it gives what the ttl means, computed here from the
// generator (a user's count starts again when its record comes more than
// 500 ms after the user's last one).
func TestChainedReduceWithTTLMatchesItsMeaning(t *testing.T) {
	opts := datagen.DefaultEventOptions()
	opts.Keys = 20
	g, err := datagen.NewEvents(opts)
	require.NoError(t, err)
	last, n := map[string]int64{}, map[string]int{}
	var want []string
	resets := 0
	for i := int64(1); i <= ttlRecords; i++ {
		e := g.At(i)
		u := g.User(e)
		if l, ok := last[u]; ok && e.TS-l > 500 {
			n[u] = 0
			resets++
		}
		last[u] = e.TS
		n[u]++
		want = append(want, fmt.Sprintf(`{"idx":%d,"n":%d,"user":"%s"}`, i, n[u], u))
	}
	require.Greater(t, resets, 100, "the input has gaps longer than the ttl")
	slices.Sort(want)
	for _, chaining := range []bool{false, true} {
		name := runtimetest.UniqueName(t)
		j := runtimetest.Start(t, ttlSpec(name, chaining), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 30*time.Second), j.Info().Error)
		chain := map[string]string{"gen": "", "key": "", "runs": "", "out": ""}
		if chaining {
			chain = map[string]string{"gen": "", "key": "gen", "runs": "gen", "out": "gen"}
		}
		require.Equal(t, chain, chainedTo(j.Info()))
		got := runtimetest.Values(name)
		slices.Sort(got)
		require.Equal(t, want, got, "chaining %v", chaining)
	}
}
