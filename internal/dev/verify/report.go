package verify

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Range is an inclusive range of values.
type Range struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Len returns the number of values in r.
func (r Range) Len() int64 { return r.To - r.From + 1 }

func (r Range) String() string {
	if r.From == r.To {
		return strconv.FormatInt(r.From, 10)
	}
	return fmt.Sprintf("%d..%d", r.From, r.To)
}

// Report is the outcome of a check. Gaps are the values missing between First
// and Last; values below the first or above the last one found cannot be
// known missing, so compare First and Last with what the producer sent.
type Report struct {
	Files int `json:"files"`
	// Partitions read (a Kafka topic's check; then Files is 0).
	Partitions int   `json:"partitions,omitempty"`
	Records    int64 `json:"records"`  // values read, duplicates included
	Distinct   int64 `json:"distinct"` // different values read
	First      int64 `json:"first"`    // smallest value; 0 with no records
	Last       int64 `json:"last"`     // largest value; 0 with no records

	Gaps      []Range `json:"gaps"`      // the first 20 missing ranges, ascending
	GapCount  int64   `json:"gapCount"`  // missing values in all gaps
	GapRanges int64   `json:"gapRanges"` // number of missing ranges

	Duplicates       int64   `json:"duplicates"`       // extra occurrences: Records - Distinct
	DuplicateSamples []int64 `json:"duplicateSamples"` // the first few duplicated values met

	Unparseable        int64    `json:"unparseable"`        // lines without a readable value
	UnparseableSamples []string `json:"unparseableSamples"` // the first few, as "file:line: content"

	// Owner is the job the directory's ownership marker names (nil: no
	// marker, or a Kafka topic); NewFiles counts the finished files it
	// committed (see CheckOwner).
	Owner    *runtime.OutputOwner `json:"owner,omitempty"`
	NewFiles int                  `json:"newFiles"`
}

// OK reports whether the output holds every value from First to Last exactly
// once and nothing else. An empty output is OK: there is nothing wrong in it.
func (r *Report) OK() bool {
	return r.GapCount == 0 && r.Duplicates == 0 && r.Unparseable == 0
}

func (r *Report) addGap(g Range) {
	r.GapRanges++
	r.GapCount += g.Len()
	if len(r.Gaps) < maxListedGaps {
		r.Gaps = append(r.Gaps, g)
	}
}

// WriteText writes a short human summary: one line, then the details of
// whatever is wrong.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintln(w, r.summary())
	if r.Owner != nil {
		fmt.Fprintln(w, "  "+r.ownerLine())
	}
	r.writeGaps(w)
	if r.Duplicates > 0 {
		fmt.Fprintf(w, "  duplicates: %d extra, e.g. %s\n", r.Duplicates, joinInts(r.DuplicateSamples))
	}
	if r.Unparseable > 0 {
		fmt.Fprintf(w, "  unparseable lines: %d, e.g.\n", r.Unparseable)
		for _, s := range r.UnparseableSamples {
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
}

func (r *Report) summary() string {
	verdict := "OK"
	if !r.OK() {
		verdict = "NOT OK"
	}
	var b strings.Builder
	where := plural(int64(r.Files), "file")
	if r.Partitions > 0 {
		where = plural(int64(r.Partitions), "partition")
	}
	if r.Records == 0 {
		fmt.Fprintf(&b, "no records in %s", where)
	} else {
		fmt.Fprintf(&b, "records %d..%d: %s in %s, %s",
			r.First, r.Last, plural(r.Records, "record"), where, plural(r.GapRanges, "gap"))
		if r.GapCount > 0 {
			fmt.Fprintf(&b, " (%d missing)", r.GapCount)
		}
		fmt.Fprintf(&b, ", %s", plural(r.Duplicates, "duplicate"))
	}
	if r.Unparseable > 0 {
		fmt.Fprintf(&b, ", %d unparseable", r.Unparseable)
	}
	fmt.Fprintf(&b, " — %s", verdict)
	return b.String()
}

func (r *Report) writeGaps(w io.Writer) {
	if r.GapRanges == 0 {
		return
	}
	fmt.Fprintln(w, "  missing:")
	for _, g := range r.Gaps {
		fmt.Fprintf(w, "    %s (%d)\n", g, g.Len())
	}
	if more := r.GapRanges - int64(len(r.Gaps)); more > 0 {
		fmt.Fprintf(w, "    … and %d more ranges\n", more)
	}
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.FormatInt(n, 10) + " " + word + "s"
}

func joinInts(vs []int64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, ", ")
}
