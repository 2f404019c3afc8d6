package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The HA block of docs/high-availability.md (between the ha-block
// markers), run as written, as TestByHandBlockTwice runs the README's by-hand
// block: a user pastes it into one shell. etcd and three daemons run in
// the background with log files, `list` gives the owner's pid, the owner
// is killed and the job is RUNNING on another daemon, asked through a
// daemon that is still alive. Only what would clash with the machine is
// moved: /tmp, the ports and $HOME; the flinkgo on PATH is the binary
// under test.
func haDocsBlock(t *testing.T) {
	raw, err := os.ReadFile("../docs/high-availability.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "<!-- ha-block:begin")
	require.True(t, ok, "the page marks its HA block")
	block, _, ok := strings.Cut(rest, "<!-- ha-block:end -->")
	require.True(t, ok)
	var script []string
	for _, line := range strings.Split(block, "\n") {
		if code, ok := strings.CutPrefix(line, "    "); ok {
			script = append(script, code)
		}
	}
	require.NotEmpty(t, script)

	work := t.TempDir()
	tmp, home := filepath.Join(work, "tmp"), filepath.Join(work, "home")
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	etcd, base := freePort(t), freePortRun(t, 3)
	move := strings.NewReplacer("/tmp/", tmp+"/",
		"127.0.0.1:2379", "127.0.0.1:"+strconv.Itoa(etcd),
		"flinkgo dev etcd ", "flinkgo dev etcd --client-port "+strconv.Itoa(etcd)+" ",
		"127.0.0.1:808$i", "127.0.0.1:$(("+strconv.Itoa(base-1)+" + i))")
	// A block that fails half-way leaves no etcd or daemon behind.
	text := "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + move.Replace(strings.Join(script, "\n")) + "\n"
	require.NotContains(t, text, "808$i", "every daemon port was moved")

	cmd := exec.Command("bash", "-c", text)
	cmd.Dir = work
	e := newEnv(t)
	cmd.Env = append(e.environ(), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"), "HOME="+home, "FLINKGO_REST_ADDRESS=")
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the HA block hangs:\n%s\n%s", out, haLogs(tmp))
	}
	require.NoError(t, err, "the HA block fails:\n%s\n%s", out, haLogs(tmp))
	text = string(out)
	lists := strings.Split(text, "ID ")
	require.GreaterOrEqual(t, len(lists), 3, "two lists: %s", text)
	require.Regexp(t, `NAME\s+STATE\s+SUBMITTED\s+RESTARTS\s+OWNER\s+PID\n\S+\s+gen\s+RUNNING\s+.*127\.0\.0\.1:\d+\s+\d+\n`, lists[1], "list shows the owner and its pid")
	require.Regexp(t, `\S+\s+gen\s+RUNNING\s+.*127\.0\.0\.1:\d+\s+\d+\n`, lists[len(lists)-1])
	require.NoDirExists(t, filepath.Join(tmp, "fg"), "the clean-up removed everything")
}

// freePortRun returns the first of n consecutive ports that are free now.
func freePortRun(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		first := freePort(t)
		free := true
		for p := first + 1; p < first+n && free; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if free = err == nil; free {
				_ = ln.Close()
			}
		}
		if free {
			return first
		}
	}
	t.Fatal("no run of free ports")
	return 0
}

// haLogs returns the block's log files, for a failure's message.
func haLogs(tmp string) string {
	var b strings.Builder
	for _, f := range []string{"etcd.log", "d1.log", "d2.log", "d3.log"} {
		if data, err := os.ReadFile(filepath.Join(tmp, "fg", f)); err == nil {
			b.WriteString("--- " + f + "\n")
			b.Write(data)
		}
	}
	return b.String()
}
