package spectest

import (
	"fmt"
	"io"
	"strings"
)

// WriteResult writes a result as `flinkgo test` shows it: one line, and
// for a failure what differs, indented under it.
func WriteResult(w io.Writer, r Result) {
	status := "PASS"
	if !r.Passed {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s %s (%s)\n", status, r.Name, formatMs(r.DurationMs))
	if r.Passed {
		return
	}
	fmt.Fprint(w, Explain(r, "    "))
}

// Explain is why a result failed, one problem a line, each line starting
// with indent ("" for a passed test).
func Explain(r Result, indent string) string {
	var b strings.Builder
	if r.Error != "" {
		fmt.Fprintf(&b, "%s%s:%d: %s\n", indent, r.File, r.Line, r.Error)
	}
	for _, s := range r.Sinks {
		if !s.Failed {
			continue
		}
		fmt.Fprintf(&b, "%s%s:%d: sink %s received %d %s:\n", indent, r.File, s.Line, s.Sink, s.Received, plural(s.Received, "row"))
		in := indent + "  "
		for _, m := range s.Missing {
			fmt.Fprintf(&b, "%smissing     %s%s\n", in, m.Row, atLine(m.Line))
		}
		for _, u := range s.Unexpected {
			fmt.Fprintf(&b, "%sunexpected  %s\n", in, u.Row)
		}
		for _, c := range s.Changed {
			fmt.Fprintf(&b, "%schanged     %s%s\n", in, describeChange(c), atLine(c.Expected.Line))
			fmt.Fprintf(&b, "%s              expected %s\n", in, c.Expected.Row)
			fmt.Fprintf(&b, "%s              received %s\n", in, c.Received.Row)
		}
		for _, p := range s.Problems {
			fmt.Fprintf(&b, "%s%s\n", in, p)
		}
		for _, r := range s.Rows {
			fmt.Fprintf(&b, "%sreceived    %s\n", in, r.Row)
		}
		if len(s.Rows) < s.Received && len(s.Rows) > 0 {
			fmt.Fprintf(&b, "%s...and %d more\n", in, s.Received-len(s.Rows))
		}
	}
	return b.String()
}

func atLine(line int) string {
	if line == 0 {
		return ""
	}
	return fmt.Sprintf("  (line %d)", line)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func formatMs(ms float64) string {
	if ms < 10 {
		return fmt.Sprintf("%.1fms", ms)
	}
	if ms < 1000 {
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.2fs", ms/1000)
}
