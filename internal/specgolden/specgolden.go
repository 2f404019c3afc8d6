// Package specgolden replays golden files of bad specs: YAML files whose
// leading comment describes the mistake, followed by one
// "# want: line:col: field: message" line per problem the checker must
// report, in file order. A want is a prefix of the problem's text, so the
// position and the field are always checked and a long message may be cut
// short. Lines count from the top of the file, header included.
//
// It imports nothing of flinkgo, so the spec parser's own tests (package
// api) and the engine's (with real operator types) share it.
package specgolden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WantPrefix starts an expectation line.
const WantPrefix = "# want: "

// Check returns the problems of a spec as "line:col: field: message"
// strings (no file name), in file order.
type Check func(t *testing.T, file string, src []byte) []string

// Replay runs check on every file matching glob (at least min of them)
// and compares with its want lines; with rewrite it writes the current
// problems as the want lines instead (review the diff: it is the behavior
// change).
func Replay(t *testing.T, glob string, min int, rewrite bool, check Check) {
	t.Helper()
	files, err := filepath.Glob(glob)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), min, "golden files %s", glob)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			desc, wants := SplitHeader(string(raw))
			require.NotEmpty(t, desc, "%s: describe the mistake in a first comment line", file)
			if rewrite {
				rewriteFile(t, file, string(raw), desc, len(wants), check)
				return
			}
			require.NotEmpty(t, wants, "%s has no want lines (run with -rewrite)", file)
			got := check(t, file, raw)
			require.Len(t, got, len(wants), "want exactly these problems:\n%s\ngot:\n%s",
				strings.Join(wants, "\n"), strings.Join(got, "\n"))
			for i := range wants {
				assert.True(t, strings.HasPrefix(got[i], wants[i]), "problem %d:\nwant %s\ngot  %s", i, wants[i], got[i])
			}
		})
	}
}

// SplitHeader separates the leading comment lines of a bad spec into its
// description and its expectations.
func SplitHeader(src string) (desc, wants []string) {
	for _, line := range strings.SplitAfter(src, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		line = strings.TrimRight(line, "\n")
		if w, ok := strings.CutPrefix(line, WantPrefix); ok {
			wants = append(wants, w)
		} else {
			desc = append(desc, line)
		}
	}
	return desc, wants
}

// rewriteFile writes the current problems as the file's want lines. The
// header's length moves the lines of the body, so it iterates until the
// number of want lines is stable.
func rewriteFile(t *testing.T, file, raw string, desc []string, n int, check Check) {
	t.Helper()
	body := raw
	for strings.HasPrefix(body, "#") {
		i := strings.IndexByte(body, '\n')
		if i < 0 {
			body = ""
			break
		}
		body = body[i+1:]
	}
	head := strings.Join(desc, "\n") + "\n"
	for range 10 {
		src := head + strings.Repeat(WantPrefix+"?\n", n) + body
		got := check(t, file, []byte(src))
		if len(got) != n {
			n = len(got)
			continue
		}
		var b strings.Builder
		b.WriteString(head)
		for _, g := range got {
			b.WriteString(WantPrefix + g + "\n")
		}
		b.WriteString(body)
		require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
		return
	}
	t.Fatalf("%s: the number of problems does not settle", file)
}
