package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The README's by-hand experiment, run as written (between the by-hand
// markers): a new user pastes it into a shell. Only what would clash
// with the machine is moved: the broker's port, /tmp and $HOME; the
// flinkgo on PATH is the binary under test.
func TestReadmeByHand(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "<!-- by-hand:begin")
	require.True(t, ok, "the README marks its by-hand sequence")
	block, _, ok := strings.Cut(rest, "<!-- by-hand:end -->")
	require.True(t, ok)
	var script []string
	for _, line := range strings.Split(block, "\n") {
		if code, ok := strings.CutPrefix(line, "    "); ok {
			script = append(script, code)
		}
	}
	require.NotEmpty(t, script)
	require.True(t, strings.HasPrefix(script[0], "make build && export PATH=$PWD/bin:$PATH"), "it starts by putting bin/ on PATH: %s", script[0])
	script[0] = "" // the binary under test is on PATH already

	work := t.TempDir()
	tmp, home := filepath.Join(work, "tmp"), filepath.Join(work, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "configs", "jobs"), 0o700))
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	port := strconv.Itoa(freePort(t))
	move := strings.NewReplacer("/tmp/", tmp+"/", "localhost:9092", "127.0.0.1:"+port,
		"flinkgo dev kafka ", "flinkgo dev kafka --listen 127.0.0.1:"+port+" ",
		"flinkgo dev produce ", "flinkgo dev produce --brokers 127.0.0.1:"+port+" ")
	spec, err := os.ReadFile("../configs/jobs/kafka-to-files.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, "configs", "jobs", "kafka-to-files.yaml"), []byte(move.Replace(string(spec))), 0o600))
	text := "set -euo pipefail\n" + move.Replace(strings.Join(script, "\n")) + "\n"

	cmd := exec.Command("bash", "-c", text)
	cmd.Dir = work
	e := newEnv(t)
	cmd.Env = append(e.environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"), "HOME="+home,
		"FLINKGO_HOME="+filepath.Join(home, ".flinkgo"), "FLINKGO_REST_ADDRESS=")
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the by-hand sequence hangs:\n%s", out)
	}
	logs := ""
	for _, f := range []string{"flinkgo-daemon.log", "flinkgo-kafka.log", "flinkgo-produce.log"} {
		if b, err := os.ReadFile(filepath.Join(tmp, f)); err == nil {
			logs += fmt.Sprintf("--- %s\n%s", f, b)
		}
	}
	require.NoError(t, err, "the by-hand sequence fails:\n%s\n%s", out, logs)
	text = string(out)
	require.Regexp(t, `records 1\.\.\d+: \d+ records in \d+ files?, 0 gaps, 0 duplicates — OK`, text,
		"dev verify: every idx exactly once across the savepoint")
	require.NoDirExists(t, filepath.Join(tmp, "flinkgo-out"), "the clean-up removed the output")
	require.NoFileExists(t, filepath.Join(tmp, "flinkgo-daemon.log"))
}
