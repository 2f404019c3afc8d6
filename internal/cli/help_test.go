package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

// Every command's --help shows an example line (cobra's own help and
// completion commands aside), and each example runs a real command.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := NewRoot(all.Registry())
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		assert.NotEmpty(t, c.Example, "flinkgo %s --help has no example", c.CommandPath())
		for _, line := range strings.Split(c.Example, "\n") {
			words := strings.Fields(line)
			if len(words) < 2 || words[0] != "flinkgo" && !strings.HasPrefix(words[0], "JOB=$(flinkgo") {
				continue
			}
			if strings.HasPrefix(words[0], "JOB=") {
				words = append([]string{"flinkgo"}, words[1:]...)
			}
			found, _, err := root.Find(words[1:])
			if assert.NoError(t, err, "%s: %q", c.CommandPath(), line) {
				assert.NotEqual(t, root, found, "%s: %q names no command", c.CommandPath(), line)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// The README and docs/ name only commands that exist (a user pastes them):
// `flinkgo inspect` is `flinkgo savepoint inspect`. And nothing in the
// repository points at documents or tracker issues a user does not have.
func TestDocsNameRealCommands(t *testing.T) {
	root := NewRoot(all.Registry())
	root.InitDefaultCompletionCmd()
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	files = append(files, "../../README.md")
	// Commands appear in code: `spans` and indented code blocks.
	code := regexp.MustCompile("`[^`\n]+`|(?m)^(?:    |\t).*$")
	cmdRef := regexp.MustCompile(`(?:^|[\s$(])flinkgo ([a-z][a-z0-9-]*)(?: ([a-z][a-z0-9-]*))?`)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, span := range code.FindAllString(string(raw), -1) {
			if i := strings.Index(span, " # "); i >= 0 && !strings.HasPrefix(span, "`") {
				span = span[:i] // a shell comment is prose
			}
			for _, m := range cmdRef.FindAllStringSubmatch(strings.Trim(span, "`"), -1) {
				c, _, err := root.Find([]string{m[1]})
				if !assert.NoError(t, err, "%s: %q", file, span) || !assert.NotEqual(t, root, c, "%s: %q names no command", file, span) {
					continue
				}
				if m[1] == "dev" && m[2] != "" { // dev has only subcommands
					sub, _, err := root.Find([]string{m[1], m[2]})
					assert.True(t, err == nil && sub != c, "%s: %q names no dev command", file, span)
				}
			}
		}
	}
	stale := regexp.MustCompile(`DESIGN\.md|STYLE\.md|\b[Ii]ssue \d+\b`)
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".js")) {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := stale.FindIndex(raw); loc != nil && !strings.HasSuffix(path, "help_test.go") {
			t.Errorf("%s mentions %q: name what it says instead (DESIGN.md, STYLE.md and the tracker are not in the repository)", path, raw[loc[0]:loc[1]])
		}
		return nil
	})
	require.NoError(t, err)
}
