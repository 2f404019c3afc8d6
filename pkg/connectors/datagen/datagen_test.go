package datagen

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// subtasks opens par sources of one datagen operator, restored from old
// (nil: a fresh start).
func subtasks(t *testing.T, f format, start, count int64, par int, old []*state.Snapshot) []*source {
	t.Helper()
	return openSources(t, source{start: start, count: count, format: f}, par, old)
}

// openSources opens par copies of proto as the subtasks of one datagen
// operator, restored from old (nil: a fresh start).
func openSources(t *testing.T, proto source, par int, old []*state.Snapshot) []*source {
	t.Helper()
	out := make([]*source, par)
	for i := range out {
		o := runtime.ContextOptions{UID: "gen", Subtask: i, Parallelism: par, State: state.NewOperatorState()}
		if old != nil {
			o.Restored = true
			o.State = state.RestoreOperatorState(old, i, par)
		}
		ctx := runtime.NewContext(o)
		s := proto
		out[i] = &s
		require.NoError(t, out[i].Open(ctx))
	}
	return out
}

// drain polls s until end of input or max records, returning the values.
func drain(t *testing.T, s *source, max int) []string {
	t.Helper()
	var out []string
	for _, r := range drainRecords(t, s, max) {
		out = append(out, string(r.Value))
	}
	return out
}

// drainRecords polls s until end of input or max records, returning them.
func drainRecords(t *testing.T, s *source, max int) []runtime.Record {
	t.Helper()
	var out []runtime.Record
	for len(out) < max {
		b := runtime.NewBatch()
		b.Records = b.Records[:0:min(cap(b.Records), max-len(out))]
		err := s.Poll(b)
		out = append(out, b.Records...)
		if errors.Is(err, runtime.ErrEndOfInput) {
			break
		}
		require.NoError(t, err)
	}
	return out
}

// snapshot takes each source's state through its encoding, as a
// checkpoint does.
func snapshot(t *testing.T, srcs []*source) []*state.Snapshot {
	t.Helper()
	out := make([]*state.Snapshot, len(srcs))
	for i, s := range srcs {
		require.NoError(t, s.SnapshotState(1))
		data, _ := state.Encode(s.ctx.OperatorState(), nil)
		snap, err := state.Decode(data)
		require.NoError(t, err)
		out[i] = snap
	}
	return out
}

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		f    format
		want []string
	}{
		{formatJSON, []string{`{"idx": 5}`, `{"idx": 7}`}},
		{formatRaw, []string{"5", "7"}},
		{formatChecked, []string{string(AppendChecked(nil, 0, 5)), string(AppendChecked(nil, 0, 7))}},
	} {
		s := subtasks(t, c.f, 5, 4, 2, nil)
		require.Equal(t, c.want, drain(t, s[0], 100))
	}
	require.Equal(t, `{"split":1,"seq":6,"crc":"`, drain(t, subtasks(t, formatChecked, 5, 4, 2, nil)[1], 1)[0][:26])
}

// requireEachOnce checks values hold every checked record of the sequence
// start..start+count-1 once, each in its split of splits, and in order
// within each reader's values (as the checker of the fault tests would).
func requireEachOnce(t *testing.T, splits int, start, count int64, readers ...[]string) {
	t.Helper()
	seen := map[int64]bool{}
	for _, vs := range readers {
		last := map[int]int64{}
		for _, v := range vs {
			split, seq, err := ParseChecked([]byte(v))
			require.NoError(t, err, v)
			require.False(t, seen[seq], "duplicate %s", v)
			seen[seq] = true
			require.Equal(t, int((seq-start)%int64(splits)), split, "split of %s", v)
			if prev, ok := last[split]; ok {
				require.Greater(t, seq, prev, "order within split %d", split)
			}
			last[split] = seq
		}
	}
	for seq := start; seq < start+count; seq++ {
		require.True(t, seen[seq], "lost seq %d", seq)
	}
	require.Len(t, seen, int(count))
}

// A restore continues every split where its snapshot left it, at any
// parallelism: the splits (and so the checked records' split ids) stay
// those of the first run.
func TestCheckedRestoreContinuesSplits(t *testing.T) {
	for _, par := range []int{1, 2, 3, 5} {
		first := subtasks(t, formatChecked, 1, 100, 3, nil)
		var before [][]string
		for i, s := range first {
			before = append(before, drain(t, s, 7*(i+1)))
		}
		restored := subtasks(t, formatChecked, 1, 100, par, snapshot(t, first))
		after := make([][]string, 0, par)
		for _, s := range restored {
			after = append(after, drain(t, s, 1000))
		}
		requireEachOnce(t, 3, 1, 100, append(before, after...)...)
	}
}

// Splits that ended stay ended after a restore, even when every split of
// the source had ended before the snapshot (the final checkpoint of a
// bounded job).
func TestRestoreAfterEndOfInput(t *testing.T) {
	first := subtasks(t, formatChecked, 1, 10, 2, nil)
	for _, s := range first {
		drain(t, s, 1000)
	}
	for _, par := range []int{1, 2, 3} {
		for _, s := range subtasks(t, formatChecked, 1, 10, par, snapshot(t, first)) {
			require.Empty(t, drain(t, s, 1000), "parallelism %d", par)
		}
	}
}

func TestRejectsUnknownFormat(t *testing.T) {
	_, err := engine.Compile(testRegistry, "t.yaml", []byte(`
name: bad
operators:
  - {uid: gen, type: datagen, count: 1, format: csv}
  - {uid: out, type: test-collect, from: [gen], name: x}
`), engine.Defaults{})
	require.ErrorContains(t, err, "must be json, raw, checked or events")
}

// Through a job: stop with a savepoint halfway, restore at another
// parallelism; every record arrives once and in order within its split.
func TestCheckedStopAndRestore(t *testing.T) {
	name := fmt.Sprintf("datagen-checked-%d", time.Now().UnixNano())
	defer runtimetest.Reset(name)
	spec := func(par, rate int) string {
		return fmt.Sprintf(`
name: checked
parallelism: %d
checkpointing: {interval: 20ms}
operators:
  - {uid: gen, type: datagen, count: 3000, rate: %d, format: checked}
  - {uid: out, type: test-collect, from: [gen], name: %s, parallelism: 1}
`, par, rate, name)
	}
	sp := t.TempDir()
	j := runtimetest.Start(t, spec(2, 10000), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), SavepointsDir: sp})
	require.Eventually(t, func() bool { return len(runtimetest.Values(name)) > 300 }, 20*time.Second, 5*time.Millisecond)
	path, _, err := j.Stop("", false)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
	before := runtimetest.Values(name)
	require.Less(t, len(before), 3000, "stopped before the end")

	j = runtimetest.Start(t, spec(3, 0), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), Restore: path})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	all := runtimetest.Values(name)
	requireEachOnce(t, 2, 1, 3000, all[:len(before)], all[len(before):])
}
