// Command scorecard renders the reliability figures the fault tests wrote
// (internal/scorecard) as a Markdown table: printed, and with -readme
// written into the README between its scorecard markers.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/internal/scorecard"
)

const (
	begin = "<!-- scorecard:begin -->"
	end   = "<!-- scorecard:end -->"
)

func main() {
	dir := flag.String("dir", "", "directory the tests wrote their entries to")
	readme := flag.String("readme", "", "README to update between the scorecard markers")
	wall := flag.Duration("wall", 0, "wall time of the suite run, for the summary line")
	by := flag.String("by", "make scorecard", "what ran the suite, for the summary line")
	flag.Parse()
	entries, err := scorecard.Load(*dir)
	if err != nil || len(entries) == 0 {
		fmt.Fprintf(os.Stderr, "scorecard: no entries in %q (%v)\n", *dir, err)
		os.Exit(1)
	}
	table := render(entries, *wall, *by)
	fmt.Print(table)
	notes, err := scorecard.Notes(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scorecard:", err)
	}
	for _, n := range notes {
		fmt.Println(n) // for whoever ran the suite, not for the README
	}
	if *readme == "" {
		return
	}
	data, err := os.ReadFile(*readme)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scorecard:", err)
		os.Exit(1)
	}
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		fmt.Fprintf(os.Stderr, "scorecard: %s has no %s ... %s section\n", *readme, begin, end)
		os.Exit(1)
	}
	s = s[:i+len(begin)] + "\n" + table + s[j:]
	if err := os.WriteFile(*readme, []byte(s), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "scorecard:", err)
		os.Exit(1)
	}
}

// render is the table and its summary line. by is what ran the suite:
// `make test` prints the figures of its own run; `make scorecard` writes
// them into the README.
func render(entries []scorecard.Entry, wall time.Duration, by string) string {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Suite < entries[j].Suite })
	var b strings.Builder
	b.WriteString("| fault test | injected | faults fired / planned | cases | records checked | lost | duplicated |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	var fired, planned, cases int
	var records, lost, dup int64
	for _, e := range entries {
		fmt.Fprintf(&b, "| %s | %s | %d / %d | %d | %d | %d | %d |\n", e.Suite, e.Faults, e.Fired, e.Planned, e.Cases, e.Records, e.Lost, e.Duplicated)
		fired += e.Fired
		planned += e.Planned
		cases += e.Cases
		records += e.Records
		lost += e.Lost
		dup += e.Duplicated
	}
	fmt.Fprintf(&b, "| **total** | | **%d / %d** | **%d** | **%d** | **%d** | **%d** |\n", fired, planned, cases, records, lost, dup)
	stamp := time.Now().UTC().Format("2006-01-02")
	took := ""
	if wall > 0 {
		took = fmt.Sprintf(" (suite wall time %s)", wall.Round(time.Second))
	}
	fmt.Fprintf(&b, "\nProduced by `%s` on %s%s", by, stamp, took)
	if by != "make scorecard" {
		b.WriteString(": the fault tests' figures of this run (`make scorecard` writes them into the README)")
	}
	b.WriteString(".\n")
	return b.String()
}
