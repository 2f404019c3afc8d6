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

// byHandBlock returns the shell lines between the by-hand markers of doc
// (indented code), the first one (make build) blanked: the binary under
// test is on PATH already.
func byHandBlock(t *testing.T, doc string) []string {
	raw, err := os.ReadFile(doc)
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "<!-- by-hand:begin")
	require.True(t, ok, "%s marks its by-hand sequence", doc)
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
	script[0] = ""
	return script
}

// runByHand runs script in one shell, as a user pastes it, moving only
// what would clash with the machine: the broker's port, /tmp and $HOME.
// It returns the shell's output and the directory standing for /tmp.
func runByHand(t *testing.T, script string) (string, string) {
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
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+move.Replace(script)+"\n")
	cmd.Dir = work
	e := newEnv(t)
	cmd.Env = append(e.environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"), "HOME="+home,
		"FLINKGO_HOME="+filepath.Join(home, ".flinkgo"), "FLINKGO_REST_ADDRESS=")
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the by-hand sequence hangs:\n%s", out)
	}
	if err != nil {
		logs, _ := filepath.Glob(filepath.Join(tmp, "*", "*.log"))
		for _, f := range logs {
			b, _ := os.ReadFile(f)
			out = append(out, fmt.Sprintf("--- %s\n%s", f, b)...)
		}
	}
	require.NoError(t, err, "the by-hand sequence fails:\n%s", out)
	return string(out), tmp
}

var verifiedJob = regexp.MustCompile(`records 1\.\.\d+: \d+ records in \d+ files?, 0 gaps, 0 duplicates — OK\n  output of job ([0-9a-f]+) \("kafka-to-files", operator "files"\) since [^:]+:\d\d:\d\dZ: [1-9]\d* of \d+ files? committed by it`)

// The by-hand experiment pasted twice into one shell: each run has its own
// output directory, and each run's dev verify checks that run's restored
// job — a second run cannot pass on the first run's files.
func TestByHandBlockTwice(t *testing.T) {
	parallel(t)
	script := strings.Join(byHandBlock(t, "../README.md"), "\n")
	out, tmp := runByHand(t, script+"\n"+script)
	runs := verifiedJob.FindAllStringSubmatch(out, -1)
	require.Len(t, runs, 2, "dev verify names each run's job and finds every idx exactly once:\n%s", out)
	require.NotEqual(t, runs[0][1], runs[1][1], "the second run checked its own job")
	dirs, err := filepath.Glob(filepath.Join(tmp, "flinkgo-*", "out"))
	require.NoError(t, err)
	require.Len(t, dirs, 2, "one output directory per run")
}
