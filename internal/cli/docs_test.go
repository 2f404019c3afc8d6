package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README stays a first screen and a map: at most 300 lines, the
// tutorial linked before the first section.
func TestReadmeIsAMap(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	assert.LessOrEqual(t, len(lines), 300, "README.md: move text into docs/ and link it from docs/README.md")
	first, _, _ := strings.Cut(string(raw), "\n## ")
	assert.Contains(t, first, "(docs/tutorial.md)", "the README's first screen leads to the tutorial")
}

// docs/README.md is the index: it links every page of docs/.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	index, err := os.ReadFile("../../docs/README.md")
	require.NoError(t, err)
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	for _, p := range pages {
		name := filepath.Base(p)
		if name != "README.md" {
			assert.True(t, strings.Contains(string(index), "]("+name+")"), "docs/README.md does not link %s", name)
		}
	}
}

// Every relative link of the README and docs/ leads to a file of the
// repository, and a #fragment to a heading of that file.
func TestDocLinksResolve(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	files = append(files, "../../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue // http:, https:, mailto:
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			if _, err := os.Stat(dest); !assert.NoError(t, err, "%s links %s", file, target) || frag == "" {
				continue
			}
			body, err := os.ReadFile(dest)
			require.NoError(t, err)
			assert.Contains(t, headingAnchors(string(body)), frag, "%s links %s: no such heading", file, target)
		}
	}
}

// headingAnchors returns the anchors GitHub gives the Markdown headings
// of body: lower case, punctuation but - and _ dropped, spaces as -.
func headingAnchors(body string) []string {
	drop := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			out = append(out, strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-"))
		}
	}
	return out
}
