package eocheck

import (
	"fmt"
	"strings"
)

// Report is the outcome of a check. Counts are of records (lines), not of
// distinct values: a record written three times counts as two duplicates.
type Report struct {
	Files    int   // files (or other units) read
	Lines    int64 // lines read, corrupt ones included
	Records  int64 // well-formed records, expected or not
	Expected int64 // records the input held
	Distinct int64 // distinct expected records seen

	Lost       int64 // expected records never seen
	Duplicated int64 // copies beyond the first of an expected record
	OutOfOrder int64 // records below an earlier one of their split in the same file
	Corrupt    int64 // unparseable lines and checksum mismatches
	Unexpected int64 // well-formed records not in the input (unknown split or seq)

	Splits  []SplitReport
	Samples []string // the first problems met, as "file:line: what"
}

// SplitReport is one split's figures.
type SplitReport struct {
	Split      int
	Expected   int64
	Records    int64 // well-formed records of this split, duplicates included
	Lost       int64
	Duplicated int64
	OutOfOrder int64
	Unexpected int64
	Missing    []Range // the first runs of lost sequence numbers
}

// Range is a run of consecutive lost sequence numbers of a split (From
// and To included; N of them).
type Range struct {
	From, To, N int64
}

func (r Range) String() string {
	if r.N == 1 {
		return fmt.Sprint(r.From)
	}
	return fmt.Sprintf("%d..%d (%d)", r.From, r.To, r.N)
}

// OK reports exactly once: nothing lost, duplicated, out of order,
// corrupt or unexpected.
func (r *Report) OK() bool {
	return r.Lost == 0 && r.Duplicated == 0 && r.OutOfOrder == 0 && r.Corrupt == 0 && r.Unexpected == 0
}

// AtLeastOnce reports that nothing was lost, corrupt or unexpected
// (duplicates allowed), the guarantee of an at-least-once sink.
func (r *Report) AtLeastOnce() bool {
	return r.Lost == 0 && r.Corrupt == 0 && r.Unexpected == 0
}

func (r *Report) String() string {
	var b strings.Builder
	if r.OK() {
		fmt.Fprintf(&b, "exactly once: %d records of %d splits in %d files", r.Records, len(r.Splits), r.Files)
		return b.String()
	}
	fmt.Fprintf(&b, "NOT exactly once: lost %d, duplicated %d, out of order %d, corrupt %d, unexpected %d "+
		"(%d expected; %d lines, %d distinct in %d files)",
		r.Lost, r.Duplicated, r.OutOfOrder, r.Corrupt, r.Unexpected, r.Expected, r.Lines, r.Distinct, r.Files)
	for _, s := range r.Splits {
		if s.Lost+s.Duplicated+s.OutOfOrder+s.Unexpected == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  split %d: %d of %d records, lost %d, duplicated %d, out of order %d, unexpected %d",
			s.Split, s.Records, s.Expected, s.Lost, s.Duplicated, s.OutOfOrder, s.Unexpected)
		if len(s.Missing) > 0 {
			parts := make([]string, len(s.Missing))
			listed := int64(0)
			for i, m := range s.Missing {
				parts[i] = m.String()
				listed += m.N
			}
			fmt.Fprintf(&b, "; missing seq %s", strings.Join(parts, ", "))
			if listed < s.Lost {
				b.WriteString(", …")
			}
		}
	}
	for _, s := range r.Samples {
		fmt.Fprintf(&b, "\n  %s", s)
	}
	return b.String()
}
