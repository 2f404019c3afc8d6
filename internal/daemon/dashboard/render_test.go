package dashboard

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// render runs check (JavaScript, printing with console.log) against the
// page's scripts in node with a minimal DOM (testdata/dom.js). Skipped
// without node, as the browser tests are without chromium.
func render(t *testing.T, check string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	out, err := exec.Command(node, "testdata/dom.js", "assets", check).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// A job that printed nothing shows the hint and nothing else under Print
// output (a count of 0 used as a guard was rendered as a stray "0").
func TestPrintOutputEmptyShowsOnlyTheHint(t *testing.T) {
	out := render(t, `
const s = outputSection({id: 'abcdef0123456789'}, {output: []});
console.log(JSON.stringify(s.texts()));`)
	require.NotContains(t, out, `"0"`, "no stray 0: %s", out)
	require.Contains(t, out, "Nothing printed yet")
}
