package nexmark_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// expected is the JSON of events 0..n-1, sorted.
func expected(t *testing.T, c nexmark.Config, n int64) []string {
	g := newGen(t, c)
	out := make([]string, n)
	for i := range out {
		e := g.At(int64(i))
		out[i] = string(nexmark.AppendJSON(nil, &e))
	}
	sort.Strings(out)
	return out
}

func requireSame(t *testing.T, want, got []string) {
	t.Helper()
	sort.Strings(got)
	require.Equal(t, len(want), len(got))
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("record %d: got %s, want %s", i, got[i], want[i])
		}
	}
}

// A job emits exactly the generator's events, whatever its parallelism.
func TestSourceEmitsTheTimelineAtAnyParallelism(t *testing.T) {
	want := expected(t, nexmark.DefaultConfig(), 20_000)
	for _, par := range []int{1, 3} {
		name := runtimetest.UniqueName(t)
		j := runtimetest.Start(t, fmt.Sprintf(`
name: nexmark
operators:
  - {uid: nx, type: nexmark, events: 20000, parallelism: %d}
  - {uid: out, type: test-collect, from: [nx], name: %s}
`, par, name), runtimetest.Options{Types: testTypes})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, time.Minute), j.Info().Error)
		requireSame(t, want, runtimetest.Values(name))
	}
}

// A savepoint mid-way and a restore at another parallelism continue every
// split where it was: each event committed once.
func TestSourceRestoresItsPositionAtAnotherParallelism(t *testing.T) {
	c := nexmark.DefaultConfig()
	c.Seed = 3
	want := expected(t, c, 12_000)
	out, sp := t.TempDir(), t.TempDir()
	spec := func(par int) string {
		return fmt.Sprintf(`
name: nexmark-restore
checkpointing: {interval: 50ms}
operators:
  - {uid: nx, type: nexmark, events: 12000, rate: 20000, seed: 3, parallelism: %d}
  - {uid: files, type: file, from: [nx], path: %s, bucket: none, rolling: {onCheckpoint: true}}
`, par, out)
	}
	j := runtimetest.Start(t, spec(2), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), SavepointsDir: sp})
	runtimetest.WaitUntil(t, 20*time.Second, "a third of the events", func() bool { return j.Info().Operators[0].RecordsOut >= 4000 })
	path, _, err := j.Savepoint("")
	require.NoError(t, err)
	runtimetest.Cancel(t, 20*time.Second, j)
	j = runtimetest.Start(t, spec(3), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, time.Minute), j.Info().Error)
	requireSame(t, want, runtimetest.FinishedLines(t, out))
}

// Records carry their event time (dateTime) and split; within a split,
// event time never goes back, so the source needs no out-of-orderness.
func TestRecordsCarryTimeAndSplit(t *testing.T) {
	reg := runtime.MustRegistry(testTypes...)
	g, err := engine.Compile(reg, "t.yaml", []byte(`
name: t
operators:
  - {uid: nx, type: nexmark, events: 3000, eventRate: 1000}
  - {uid: out, type: discard, from: [nx]}
`), engine.Defaults{})
	require.NoError(t, err)
	v := g.Vertex("nx")
	for _, sub := range []int{0, 1} {
		src := v.Plan.NewSource()
		require.NoError(t, src.Open(runtime.NewContext(runtime.ContextOptions{Subtask: sub, Parallelism: 2})))
		last := map[uint32]int64{}
		n := 0
		for {
			b := runtime.NewBatch()
			err := src.Poll(b)
			for _, r := range b.Records {
				require.Equal(t, uint32(sub), r.Split)
				require.GreaterOrEqual(t, r.Timestamp, last[r.Split])
				require.Contains(t, string(r.Value), fmt.Sprintf(`"dateTime":%d`, r.Timestamp))
				last[r.Split] = r.Timestamp
				n++
			}
			if err == runtime.ErrEndOfInput {
				break
			}
			require.NoError(t, err)
		}
		require.Equal(t, 1500, n)
		require.NoError(t, src.Close())
	}
}

// Bad options are reported at their field.
func TestBadOptions(t *testing.T) {
	reg := runtime.MustRegistry(testTypes...)
	_, err := engine.Compile(reg, "t.yaml", []byte(`
name: t
operators:
  - {uid: nx, type: nexmark, events: -1, eventRate: 0, bidProportion: 0, rate: -2}
  - {uid: out, type: discard, from: [nx]}
`), engine.Defaults{})
	require.Error(t, err)
	for _, want := range []string{"operators[0].events: must be 0 or more", "operators[0].eventRate: must be at least 1",
		"operators[0].bidProportion: must be at least 1", "operators[0].rate: must be 0 (unlimited) or more"} {
		require.Contains(t, err.Error(), want)
	}
}
