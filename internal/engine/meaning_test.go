package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// meaningSpec is a job whose keyed operators hold state at a savepoint:
// a window (open for an hour), a reduce and a count; edit changes it.
func meaningSpec(name string, edit func(string) string) string {
	s := fmt.Sprintf(`
name: meaning
operators:
  - {uid: gen, type: datagen, rate: 20000}
  - {uid: byUser, type: keyBy, from: [gen], expr: "idx %% 7"}
  - {uid: w, type: window, from: [byUser], window: {type: tumbling, size: 10s}, time: processing, aggregate: {n: count(), top: max(idx)}}
  - {uid: sums, type: reduce, from: [byUser], init: '{"sum": 0}', expr: '{"sum": acc.sum + idx}'}
  - {uid: cnt, type: count, from: [byUser]}
  - {uid: out, type: test-collect, from: [w], name: %s, parallelism: 1}
  - {uid: out2, type: discard, from: [sums]}
  - {uid: out3, type: discard, from: [cnt]}
`, name)
	if edit != nil {
		s = edit(s)
	}
	return s
}

func replace(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("meaningSpec has no " + old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

// A savepoint records what each operator's state means, and a restore
// into a job that changes it (a window's size, its aggregates, the keyBy
// expression feeding it, a reduce's init) is refused, naming the uid, the
// old and new value and the ways out; changes that read the state the
// same go ahead, said to be safe (a renamed aggregate, a reduce's expr) or
// not changes at all (a reformatted key).
func TestRestoreRefusesChangedStateMeaning(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, meaningSpec(name, nil), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	waitRead(t, j, 1000)
	path, _, err := j.Savepoint(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, j.Cancel())
	r, err := engine.LoadRestore(vfs.Default, path)
	require.NoError(t, err)
	w := r.Meta.Operator("w")
	require.True(t, w.HasState())
	require.Equal(t, map[string]string{"window.type": "tumbling", "window.size": "10s", "time": "processing",
		"aggregate": "count(), max(idx)", "aggregate.names": "n, top", "key": "idx % 7"}, w.State.Meaning)
	require.Equal(t, 1, w.State.Version)

	cases := []struct {
		name string
		edit func(string) string
		want []string // in the error; none: the restore goes ahead
		note string   // in the plan's notes (a safe change)
	}{
		{"same job", nil, nil, ""},
		{"window size", replace("size: 10s", "size: 1m"),
			[]string{`operator "w" has window.size "10s" in the snapshot and "1m0s" now`, "misaligned", `keep window.size "10s"`, "new uid", "--allow-non-restored-state"}, ""},
		{"window type", replace("{type: tumbling, size: 10s}", "{type: sliding, size: 10s, slide: 5s}"),
			[]string{`operator "w" has window.slide "" in the snapshot and "5s" now`, `operator "w" has window.type "tumbling" in the snapshot and "sliding" now`}, ""},
		{"aggregate added", replace("top: max(idx)}", "top: max(idx), low: min(idx)}"),
			[]string{`operator "w" has aggregate "count(), max(idx)" in the snapshot and "count(), max(idx), min(idx)" now`, "adding an aggregate is not supported"}, ""},
		{"aggregate renamed", replace("{n: count(), top: max(idx)}", "{events: count(), highest: max(idx)}"), nil,
			`operator "w" has aggregate.names "n, top" in the snapshot and "events, highest" now: safe, an aggregate's accumulator is read by its position`},
		{"key expression", replace(`expr: "idx % 7"`, `expr: "idx % 5"`),
			[]string{`operator "w" has key "idx % 7" in the snapshot and "idx % 5" now`, `operator "sums" has key`, `operator "cnt" has key`, "mix old and new keys"}, ""},
		{"key reformatted", replace(`expr: "idx % 7"`, `expr: "idx  %  7"`), nil, ""},
		{"reduce init", replace(`init: '{"sum": 0}'`, `init: '{"sum": 100}'`),
			[]string{`operator "sums" has init "{\"sum\": 0}" in the snapshot and "{\"sum\": 100}" now`}, ""},
		{"reduce expr", replace(`acc.sum + idx}`, `acc.sum + 2 * idx}`), nil, `operator "sums" has expr`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := engine.Compile(testRegistry, "x.yaml", []byte(meaningSpec(name, c.edit)), engine.Defaults{})
			require.NoError(t, err)
			plan := engine.PlanRestore(g, r, engine.RestoreOptions{AllowNonRestored: true})
			if c.want == nil {
				require.NoError(t, plan.Err())
				if c.note == "" {
					require.Empty(t, plan.Notes)
				} else {
					require.Len(t, plan.Notes, 1)
					require.Contains(t, plan.Notes[0], c.note)
					require.Contains(t, plan.Notes[0], ": safe, ")
				}
				return
			}
			require.Error(t, plan.Err())
			for _, w := range c.want {
				require.ErrorContains(t, plan.Err(), w)
			}
		})
	}
}

// A savepoint written before state meanings were recorded restores as
// before, with a note that its state could not be checked from the
// snapshot; its meanings are compared through the spec it carries.
func TestRestoreOldSavepointWithoutMeaning(t *testing.T) {
	r, err := engine.LoadRestore(vfs.Default, "testdata/oldsavepoint/savepoint")
	require.NoError(t, err)
	spec, err := os.ReadFile("testdata/oldsavepoint/job.yaml")
	require.NoError(t, err)
	g, err := engine.Compile(testRegistry, "job.yaml", spec, engine.Defaults{})
	require.NoError(t, err)
	plan := engine.PlanRestore(g, r, engine.RestoreOptions{})
	require.NoError(t, plan.Err())
	require.Len(t, plan.Notes, 1, "%v", plan.Notes)
	require.Contains(t, plan.Notes[0], "did not record what operator state means")
	require.Contains(t, plan.Notes[0], "counts")

	changed := strings.Replace(string(spec), "'string(idx % 7)'", "'string(idx % 3)'", 1)
	g, err = engine.Compile(testRegistry, "job.yaml", []byte(changed), engine.Defaults{})
	require.NoError(t, err)
	require.ErrorContains(t, engine.PlanRestore(g, r, engine.RestoreOptions{}).Err(),
		`operator "counts" has key "string(idx % 7)" in the snapshot and "string(idx % 3)" now`)
}

// A savepoint of stop --drain records it, and a restore of it is refused
// unless allowed, saying why.
func TestRestoreRefusesDrainedSavepoint(t *testing.T) {
	name := runtimetest.UniqueName(t)
	spec := meaningSpec(name, nil)
	j := runtimetest.Start(t, spec, runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir(), SavepointsDir: t.TempDir()})
	waitRead(t, j, 1000)
	path, _, err := j.Stop("", true)
	require.NoError(t, err)
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 10*time.Second))
	r, err := engine.LoadRestore(vfs.Default, filepath.Clean(path))
	require.NoError(t, err)
	require.True(t, r.Meta.Drained)
	g, err := engine.Compile(testRegistry, "x.yaml", []byte(spec), engine.Defaults{})
	require.NoError(t, err)
	plan := engine.PlanRestore(g, r, engine.RestoreOptions{})
	require.ErrorContains(t, plan.Err(), "written by stop --drain")
	require.ErrorContains(t, plan.Err(), "--allow-drained")
	plan = engine.PlanRestore(g, r, engine.RestoreOptions{AllowDrained: true})
	require.NoError(t, plan.Err())
	require.True(t, plan.Drained)
	require.Contains(t, strings.Join(plan.Notes, "\n"), "--allow-drained")
}
