// Package scorecard collects the reliability figures the fault tests
// produce (faults planned and fired, cases run, records lost and
// duplicated), so the README's reliability table comes from the suite
// itself: tests call Record; `make scorecard` runs them with
// FLINKGO_SCORECARD_DIR set and renders the table.
package scorecard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// EnvDir names the directory entries are written to; unset, Record does
// nothing.
const EnvDir = "FLINKGO_SCORECARD_DIR"

// Entry is one fault test's outcome.
type Entry struct {
	// Suite is the row's name, e.g. "crash at every fault point".
	Suite string `json:"suite"`
	// Faults describes what was injected ("21 points x 2 crash models").
	Faults string `json:"faults"`
	// Planned and Fired count injected faults; Fired < Planned means some
	// never happened and the test should have failed.
	Planned int `json:"planned"`
	Fired   int `json:"fired"`
	// Cases is the number of runs or scenarios.
	Cases int `json:"cases"`
	// Records checked, and how many were lost or duplicated.
	Records    int64 `json:"records"`
	Lost       int64 `json:"lost"`
	Duplicated int64 `json:"duplicated"`
	// Seconds the test took.
	Seconds float64 `json:"seconds"`
	Test    string  `json:"test"`
	Time    string  `json:"time"`
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Record writes e for test t when the scorecard is being collected.
func Record(t testing.TB, start time.Time, e Entry) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return
	}
	e.Test = t.Name()
	e.Seconds = time.Since(start).Seconds()
	e.Time = time.Now().UTC().Format(time.RFC3339)
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		t.Errorf("scorecard: %v", err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("scorecard: %v", err)
		return
	}
	name := unsafe.ReplaceAllString(t.Name(), "_") + ".json"
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Errorf("scorecard: %v", err)
	}
}

// Load reads every entry from dir.
func Load(dir string) ([]Entry, error) {
	files, err := readAll(dir, "*.json")
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, data := range files {
		var e Entry
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Note records a line about the run that is not a fault figure (whether
// the dashboard's browser test ran or was skipped), printed below the
// table by the scorecard script; name keeps one note per topic.
func Note(name, text string) error {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, unsafe.ReplaceAllString(name, "_")+".note"), []byte(text), 0o644)
}

// Notes reads the notes of dir, sorted by name.
func Notes(dir string) ([]string, error) {
	files, err := readAll(dir, "*.note")
	var out []string
	for _, data := range files {
		out = append(out, string(data))
	}
	return out, err
}

// readAll reads the files of dir matching pattern, sorted by name.
func readAll(dir, pattern string) ([][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}
