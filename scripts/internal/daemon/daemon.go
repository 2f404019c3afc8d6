// Package daemon runs the real flinkgo binary for the benchmarks under
// scripts/: a daemon in a temporary FLINKGO_HOME, and bounded jobs timed
// from submission to FINISHED.
package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Daemon is a running `flinkgo daemon`.
type Daemon struct {
	bin, home string
	cmd       *exec.Cmd
}

// Start starts bin's daemon in home (no TCP listener) and waits for its
// socket.
func Start(bin, home string) (*Daemon, error) { return StartWith(bin, home, "--rest-address", "") }

// StartWith starts bin's daemon in home with the given daemon flags (and
// $home/flinkgo.yaml, if the caller wrote one) and waits for its socket.
func StartWith(bin, home string, args ...string) (*Daemon, error) {
	return StartEnv(bin, home, nil, args...)
}

// StartEnv is StartWith with env added to the daemon's environment (such as
// GOMAXPROCS).
func StartEnv(bin, home string, env []string, args ...string) (*Daemon, error) {
	d := &Daemon{bin: bin, home: home}
	d.cmd = exec.Command(bin, append([]string{"daemon"}, args...)...)
	d.cmd.Env = append(append(os.Environ(), "FLINKGO_HOME="+home, "FLINKGO_ADDRESS="), env...)
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	for range 200 {
		if _, err := os.Stat(filepath.Join(home, "flinkgo.sock")); err == nil {
			return d, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	d.Stop()
	return nil, fmt.Errorf("daemon did not start")
}

// Pid is the daemon's process id (for its CPU time and memory in /proc).
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Kill ends the daemon with SIGKILL (a crash) and waits for it.
func (d *Daemon) Kill() {
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
}

// Stop ends the daemon (SIGINT) and waits for it.
func (d *Daemon) Stop() {
	_ = d.cmd.Process.Signal(os.Interrupt)
	_ = d.cmd.Wait()
}

// CLI runs a flinkgo command against the daemon and returns its stdout.
func (d *Daemon) CLI(args ...string) (string, error) {
	cmd := exec.Command(d.bin, args...)
	cmd.Env = append(os.Environ(), "FLINKGO_HOME="+d.home, "FLINKGO_ADDRESS=")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("flinkgo %v: %v: %s", args, err, ee.Stderr)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// RunBounded submits the job spec at path and returns the time from
// submission until it is FINISHED (an error if it fails or is canceled).
func (d *Daemon) RunBounded(path string) (time.Duration, error) {
	start := time.Now()
	id, err := d.CLI("run", path)
	if err != nil {
		return 0, err
	}
	for {
		raw, err := d.CLI("info", id, "-o", "json")
		if err != nil {
			return 0, err
		}
		var info struct{ State, Error string }
		if err := json.Unmarshal([]byte(raw), &info); err != nil {
			return 0, err
		}
		switch info.State {
		case "FINISHED":
			return time.Since(start), nil
		case "FAILED", "CANCELED":
			return 0, fmt.Errorf("job %s: %s", info.State, info.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Median of v (which it does not change).
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
