package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTutorial runs docs/tutorial.md as written (between the tutorial
// markers), as a new user pastes it into a shell. Only what would clash
// with the machine is moved: the broker's port, /tmp and $HOME; the
// flinkgo on PATH is the binary under test. The step the tutorial marks
// "# refused" must fail, naming the window and both sizes.
func TestTutorial(t *testing.T) {
	parallel(t)
	script := docScript(t, "../docs/tutorial.md", "<!-- tutorial:begin", "<!-- tutorial:end -->")
	require.True(t, strings.HasPrefix(script[0], "make build && export PATH=$PWD/bin:$PATH"), "it starts by putting bin/ on PATH: %s", script[0])
	script[0] = "" // the binary under test is on PATH already
	refused := 0
	for i, line := range script {
		if cmd, _, ok := strings.Cut(line, "# refused"); ok {
			script[i] = fmt.Sprintf(`set +e; out=$(%s 2>&1); code=$?; set -e; echo "refusal exit $code: $out"`, strings.TrimSpace(cmd))
			refused++
		}
	}
	require.Equal(t, 1, refused, "the tutorial ends with one refused restore")

	work := t.TempDir()
	tmp, home := filepath.Join(work, "tmp"), filepath.Join(work, "home")
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	port := strconv.Itoa(freePort(t))
	move := strings.NewReplacer("/tmp/", tmp+"/", "localhost:9092", "127.0.0.1:"+port,
		"flinkgo dev kafka ", "flinkgo dev kafka --listen 127.0.0.1:"+port+" ",
		"flinkgo dev produce ", "flinkgo dev produce --brokers 127.0.0.1:"+port+" ")
	text := "set -euo pipefail\n" + move.Replace(strings.Join(script, "\n")) + "\n"

	cmd := exec.Command("bash", "-c", text)
	cmd.Dir = work
	e := newEnv(t)
	cmd.Env = append(e.environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"), "HOME="+home,
		"FLINKGO_HOME="+filepath.Join(home, ".flinkgo"), "FLINKGO_REST_ADDRESS=")
	out, err := runScript(t, cmd, 3*time.Minute)
	text = string(out)
	logs := ""
	for _, f := range []string{"daemon.log", "kafka.log", "produce.log"} {
		if b, err := os.ReadFile(filepath.Join(tmp, "flinkgo-tutorial", f)); err == nil {
			logs += fmt.Sprintf("--- %s\n%s", f, b)
		}
	}
	require.NoError(t, err, "the tutorial fails:\n%s\n%s", text, logs)

	require.Regexp(t, `\{"key":\s*"u\d+",\s*"windowStart":\s*\d+,\s*"windowEnd":\s*\d+,\s*"clicks":\s*\d+,\s*"spent":\s*\d+\}`, text,
		"step 4 shows window results")
	m := regexp.MustCompile(`refusal exit (\d+): ((?s).*)`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	require.NotEqual(t, "0", m[1], "the restore into a 1m window is refused: %s", m[2])
	for _, want := range []string{"perWindow", "10s", "1m"} {
		require.Contains(t, m[2], want, "the refusal names the window and both sizes")
	}
	require.NoDirExists(t, filepath.Join(tmp, "flinkgo-tutorial"), "the clean-up removed everything")
}

// docScript returns the shell lines (indented by 4 spaces) of a document
// between its begin and end markers.
func docScript(t *testing.T, path, begin, end string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), begin)
	require.True(t, ok, "%s marks its commands with %s", path, begin)
	block, _, ok := strings.Cut(rest, end)
	require.True(t, ok, "%s: no %s", path, end)
	var script []string
	for _, line := range strings.Split(block, "\n") {
		if code, ok := strings.CutPrefix(line, "    "); ok {
			script = append(script, code)
		}
	}
	require.NotEmpty(t, script)
	return script
}

// runScript runs cmd and returns its combined output; a script that runs
// past timeout is killed and fails the test.
func runScript(t *testing.T, cmd *exec.Cmd, timeout time.Duration) ([]byte, error) {
	t.Helper()
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		return out, err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the script hangs:\n%s", out)
		return nil, nil
	}
}
