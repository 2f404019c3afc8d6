package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestJudgeMeaning(t *testing.T) {
	cases := []struct {
		name            string
		changes         []runtime.MeaningChange
		problems, notes []string
	}{
		{"none", nil, nil, nil},
		{"refused", []runtime.MeaningChange{{Name: "window.size", Was: "10s", Now: "1m0s", Why: "misaligned"}},
			[]string{`has window.size "10s" in the snapshot and "1m0s" now: misaligned; keep window.size "10s", or give the operator a new uid to start it empty (and pass --allow-non-restored-state to drop the state of "w")`}, nil},
		{"version", []runtime.MeaningChange{{Name: runtime.VersionName, Was: "1", Now: "2", Why: "layout"}},
			[]string{`has version "1" in the snapshot and "2" now: layout; restore it with the flinkgo that wrote it, or give the operator a new uid to start it empty (and pass --allow-non-restored-state to drop the state of "w")`}, nil},
		{"safe", []runtime.MeaningChange{{Name: "label", Was: "a", Now: "b", Safe: true, Why: "a label"}},
			nil, []string{`operator "w" has label "a" in the snapshot and "b" now: safe, a label`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems, notes := judgeMeaning("w", c.changes)
			require.Equal(t, c.problems, problems)
			require.Equal(t, c.notes, notes)
		})
	}
}

func TestDrainedProblem(t *testing.T) {
	require.Empty(t, drainedProblem(false, false))
	require.Empty(t, drainedProblem(false, true))
	require.Empty(t, drainedProblem(true, true))
	require.Contains(t, drainedProblem(true, false), "--allow-drained")
}
