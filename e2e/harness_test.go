// Package e2e runs the real flinkgo binary: a daemon in a temporary
// FLINKGO_HOME and the CLI against it, as a user would.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
	"github.com/flinkgo/flinkgo/pkg/api"
)

var binary string

func TestMain(m *testing.M) {
	takeOverParallel()
	dir, err := os.MkdirTemp("", "flinkgo-e2e-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "flinkgo")
	build := exec.Command("go", append(buildArgs(), "-o", binary, "../cmd/flinkgo")...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build flinkgo:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	// The in-process brokers and producers of the tests leave nothing behind.
	if code == 0 {
		if err := goleak.Find(etcdserver.IgnoredGoroutines()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// buildArgs builds the binaries the tests run as users get them, without
// the race detector: it multiplies the daemons' CPU several times, and on
// 2 cores the suite then outgrows its budget and its timing-bound tests
// starve. Races are the in-process tests' job (make test runs every
// package under -race, daemon and engine included); FLINKGO_E2E_RACE=1
// (make chaos) builds them with -race as well.
func buildArgs() []string {
	if os.Getenv("FLINKGO_E2E_RACE") == "1" {
		return []string{"build", "-race"}
	}
	return []string{"build"}
}

// env is a temporary FLINKGO_HOME with (optionally) a daemon.
type env struct {
	t      *testing.T
	home   string
	daemon *exec.Cmd
	stdout *syncWriter // the daemon's stdout (print sink lines)
	stderr *syncWriter // the daemon's log
	extra  []string    // extra environment for the daemon
	// bin is the flinkgo binary this env runs ("" : the one TestMain built).
	bin string
}

func newEnv(t *testing.T) *env {
	home := t.TempDir()
	return &env{t: t, home: home}
}

// binary returns the binary the env runs.
func (e *env) binary() string {
	if e.bin != "" {
		return e.bin
	}
	return binary
}

func (e *env) environ() []string {
	// FLINKGO_WAIT_RUNNING=0: run returns once the job is RUNNING, as the
	// tests expect; those of run's watch pass --wait-running.
	env := append(os.Environ(), "FLINKGO_HOME="+e.home, "FLINKGO_ADDRESS=", "FLINKGO_WAIT_RUNNING=0")
	if os.Getenv("GORACE") == "" {
		// A -race binary sleeps 1s at exit (atexit_sleep_ms) so late race
		// reports get out; every CLI call would pay it.
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	return append(env, e.extra...)
}

// startDaemon starts `flinkgo daemon` and waits until it answers (and has
// written its REST address).
func (e *env) startDaemon(args ...string) {
	e.t.Helper()
	e.spawnDaemon(args...)
	e.waitReady(20 * time.Second)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(e.home, "rest.address")); err == nil {
			return
		}
	}
	e.t.Fatalf("daemon wrote no rest.address: %s", e.stderr.String())
}

// killDaemon kills the daemon with SIGKILL (a crash) if it still runs.
func (e *env) killDaemon() {
	if e.daemon == nil {
		return
	}
	_ = e.daemon.Process.Signal(syscall.SIGKILL)
	_ = e.daemon.Wait()
	e.daemon = nil
}

// stopDaemon sends SIGTERM and returns the exit code and how long it took.
func (e *env) stopDaemon() (int, time.Duration) {
	start := time.Now()
	require.NoError(e.t, e.daemon.Process.Signal(syscall.SIGTERM))
	err := e.daemon.Wait()
	e.daemon = nil
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), time.Since(start)
	}
	return 0, time.Since(start)
}

func (e *env) restAddress() string {
	b, err := os.ReadFile(filepath.Join(e.home, "rest.address"))
	require.NoError(e.t, err)
	return strings.TrimSpace(string(b))
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs the CLI and returns its exit code and output.
func (e *env) run(args ...string) result { return e.runIn("", args...) }

// runIn runs the CLI in dir (a user's working directory; "": the test's).
func (e *env) runIn(dir string, args ...string) result {
	cmd := exec.Command(e.binary(), args...)
	cmd.Env, cmd.Dir = e.environ(), dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// mustRun runs the CLI and fails the test on a non-zero exit.
func (e *env) mustRun(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	require.Equal(e.t, 0, r.code, "flinkgo %v: %s%s", args, r.stdout, r.stderr)
	return strings.TrimSpace(r.stdout)
}

// info returns `info -o json` of a job.
func (e *env) info(id string) api.JobInfo {
	e.t.Helper()
	var info api.JobInfo
	require.NoError(e.t, json.Unmarshal([]byte(e.mustRun("info", id, "-o", "json")), &info))
	return info
}

// waitState polls the job's info until it is in state (or fails the
// test). It asks over the socket: a CLI process per poll costs some 70 ms
// of CPU with the race detector.
func (e *env) waitState(id string, state api.JobState, timeout time.Duration) api.JobInfo {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var info api.JobInfo
	var err error
	for time.Now().Before(deadline) {
		var got *api.JobInfo
		if got, err = e.jobInfo(id); err == nil {
			info = *got
			if info.State == state {
				return info
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("job %s is %s (error %q, info: %v), not %s after %s\ndaemon log:\n%s", id, info.State, info.Error, err, state, timeout, e.stderr.String())
	return info
}

// writeSpec writes a job spec into the home and returns its path.
func (e *env) writeSpec(name, spec string) string {
	path := filepath.Join(e.home, name)
	require.NoError(e.t, os.WriteFile(path, []byte(spec), 0o600))
	return path
}

type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
