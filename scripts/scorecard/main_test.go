package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/scorecard"
)

// The summary line says what produced the table: make test prints its own
// run's figures; only make scorecard writes the README's.
func TestSummaryLineNamesWhatRanTheSuite(t *testing.T) {
	e := []scorecard.Entry{{Suite: "s", Faults: "f", Planned: 1, Fired: 1, Cases: 1}}
	assert.Contains(t, render(e, 5*time.Minute, "make test"), "Produced by `make test` on ")
	assert.Contains(t, render(e, 5*time.Minute, "make test"), "(suite wall time 5m0s): the fault tests' figures of this run (`make scorecard` writes them into the README).")
	assert.NotContains(t, render(e, 0, "make scorecard"), "figures of this run")
}

// Notes (whether the dashboard's browser test ran) are kept apart from
// the entries.
func TestNotes(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(scorecard.EnvDir, dir)
	require.NoError(t, scorecard.Note("dashboard-browser", "ran"))
	require.NoError(t, scorecard.Note("dashboard-browser", "skipped"))
	notes, err := scorecard.Notes(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"skipped"}, notes, "one note per topic, the last")
	entries, err := scorecard.Load(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
	_ = os.RemoveAll(dir)
}
