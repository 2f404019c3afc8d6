package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The script tests of this package (testdata/coordinator, testdata/restore)
// share one format, in the style of etcd-io/raft's interaction tests:
//
//	# comments and blank lines between blocks are kept as they are
//	<command> <args>
//	----
//	<the output, one line per decision, or (none)>
//
// Run with -rewrite to regenerate the expected output after a deliberate
// change, and review the diff.

// replayScripts replays every file matching pattern as a subtest: newRun
// makes the command runner of one file (its state lives in the closure).
func replayScripts(t *testing.T, pattern string, newRun func(t *testing.T, file string) func(line int, cmd string) string) {
	files, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			replayScript(t, file, newRun(t, file))
		})
	}
}

type scriptBlock struct {
	line     int    // of the command, 1-based
	cmd      string // the command line
	expected string // the lines after ----, joined
	verbatim string // comments and blank lines before the command
}

func parseScript(t *testing.T, file string) (blocks []scriptBlock, tail string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	var verbatim strings.Builder
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			verbatim.WriteString(line + "\n")
			i++
			continue
		}
		b := scriptBlock{line: i + 1, cmd: line, verbatim: verbatim.String()}
		verbatim.Reset()
		i++
		if i >= len(lines) || lines[i] != "----" {
			t.Fatalf("%s:%d: %q must be followed by a ---- line", file, b.line, line)
		}
		i++
		var out []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			out = append(out, lines[i])
			i++
		}
		b.expected = strings.Join(out, "\n")
		blocks = append(blocks, b)
	}
	return blocks, verbatim.String()
}

func replayScript(t *testing.T, file string, run func(line int, cmd string) string) {
	blocks, tail := parseScript(t, file)
	var rewritten strings.Builder
	for _, b := range blocks {
		got := run(b.line, b.cmd)
		if *rewrite {
			rewritten.WriteString(b.verbatim + b.cmd + "\n----\n" + got + "\n")
			continue
		}
		if got != b.expected {
			t.Errorf("%s:%d: %s\nwant:\n%s\ngot:\n%s", file, b.line, b.cmd, indent(b.expected), indent(got))
		}
	}
	if *rewrite {
		rewritten.WriteString(tail)
		require.NoError(t, os.WriteFile(file, []byte(rewritten.String()), 0o644))
	}
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
