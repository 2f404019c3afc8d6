package jobchaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteText prints the report as `flinkgo chaos` shows it.
func (rep *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "undisturbed run: %s (job %s), %s\n", ms(rep.Undisturbed.WallMs), ms(rep.Undisturbed.JobMs), rep.Undisturbed.State)
	fmt.Fprintf(w, "disturbed run:   %s (job %s), %s, %.2f× the undisturbed run; faults within %s of each (re)start, seed %d\n",
		ms(rep.Disturbed.WallMs), ms(rep.Disturbed.JobMs), rep.Disturbed.State, rep.Ratio, ms(rep.WindowMs), rep.Seed)
	if rep.Disturbed.Error != "" {
		fmt.Fprintf(w, "  the job's error: %s\n", rep.Disturbed.Error)
	}
	fmt.Fprintf(w, "faults: %d injected, %d fired\n", rep.Injected, rep.Fired)
	for i, f := range rep.Faults {
		status := "fired at " + ms(f.AtMs)
		if !f.Fired {
			status = "not fired"
		}
		note := ""
		if f.Note != "" && f.Fired {
			note = " (" + f.Note + ")"
		} else if f.Note != "" {
			note = " (" + strings.TrimPrefix(f.Note, "not fired: ") + ")"
		}
		fmt.Fprintf(w, "  %2d  %-52s %s%s\n", i+1, f.describe(), status, note)
	}
	for _, f := range rep.Nondeterministic {
		fmt.Fprintf(w, "warning: operator %s (%s) is not deterministic: %s\n", f.Operator, f.Type, f.Why)
	}
	if len(rep.Unchecked) > 0 {
		fmt.Fprintf(w, "note: operators of Go types were not checked for processing time or the wall clock: %s\n", strings.Join(rep.Unchecked, ", "))
	}
	uids := make([]string, 0, len(rep.NotCompared))
	for uid := range rep.NotCompared {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	for _, uid := range uids {
		fmt.Fprintf(w, "sink %s not compared: %s\n", uid, rep.NotCompared[uid])
	}
	for _, s := range rep.Sinks {
		fmt.Fprintf(w, "sink %s (%s, %s): %d records compared", s.UID, s.Type, s.Guarantee, s.Compared)
		if s.Identical {
			fmt.Fprintln(w, ", identical")
			continue
		}
		fmt.Fprintf(w, ", %d received: %d lost, %d duplicated, %d changed, %d unexpected\n", s.Received, s.Lost, s.Duplicated, s.Changed, s.Unexpected)
		if s.Guarantee != ExactlyOnce && s.Duplicated > 0 {
			fmt.Fprintf(w, "    (an %s sink may repeat records after a failure: its duplicates are what its guarantee allows; an exactly-once sink has none)\n", s.Guarantee)
		}
		rows := func(label string, rs []RowCount, total int) {
			for _, r := range rs {
				times := ""
				if r.Count > 1 {
					times = fmt.Sprintf("  ×%d", r.Count)
				}
				fmt.Fprintf(w, "    %-11s %s%s\n", label, r.Row, times)
			}
			if total > sumCounts(rs) {
				fmt.Fprintf(w, "    %-11s … %d more (-o json lists the first %d of each)\n", "", total-sumCounts(rs), maxExamples)
			}
		}
		rows("lost", s.LostRows, s.Lost)
		rows("duplicated", s.DuplicatedRows, s.Duplicated)
		for _, c := range s.ChangedRows {
			fmt.Fprintf(w, "    changed     %s\n                → %s\n", c.Expected, c.Received)
		}
		rows("unexpected", s.UnexpectedRows, s.Unexpected)
	}
	verdict := "ok  "
	what := fmt.Sprintf("outputs identical after %d %s", rep.Fired, plural(rep.Fired, "fault"))
	if !rep.Identical {
		verdict = "FAIL"
		what = fmt.Sprintf("outputs differ after %d %s: %d lost, %d duplicated, %d changed, %d unexpected of %d records",
			rep.Fired, plural(rep.Fired, "fault"), rep.Lost, rep.Duplicated, rep.Changed, rep.Unexpected, rep.Compared)
		if rep.Disturbed.State != "FINISHED" {
			what = fmt.Sprintf("the job ended %s in the disturbed run after %d %s", rep.Disturbed.State, rep.Fired, plural(rep.Fired, "fault"))
		}
	}
	fmt.Fprintf(w, "%s %s  %s  %s\n", verdict, rep.Spec, what, ms(rep.Undisturbed.WallMs+rep.Disturbed.WallMs))
	if rep.WorkDir != "" {
		fmt.Fprintf(w, "kept: %s (each run's home, daemon.log, spec and outputs)\n", rep.WorkDir)
	}
}

func sumCounts(rs []RowCount) int {
	n := 0
	for _, r := range rs {
		n += r.Count
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
