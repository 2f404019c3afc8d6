// Package benchd runs a flinkgo daemon of the real binary in a home of
// its own, for the benchmark commands under scripts/.
package benchd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Daemon is a running `flinkgo daemon`.
type Daemon struct {
	Bin, Home string
	Cmd       *exec.Cmd
}

// Start starts the daemon of bin in home, with env added to the
// environment, and waits for its socket.
func Start(bin, home string, env ...string) (*Daemon, error) {
	d := &Daemon{Bin: bin, Home: home}
	d.Cmd = exec.Command(bin, "daemon", "--rest-address", "")
	d.Cmd.Env = append(append(os.Environ(), "FLINKGO_HOME="+home, "FLINKGO_ADDRESS="), env...)
	if err := d.Cmd.Start(); err != nil {
		return nil, err
	}
	for i := 0; i < 400; i++ {
		if _, err := os.Stat(filepath.Join(home, "flinkgo.sock")); err == nil {
			return d, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	d.Stop()
	return nil, fmt.Errorf("daemon did not start")
}

// Stop interrupts the daemon and waits for it.
func (d *Daemon) Stop() {
	_ = d.Cmd.Process.Signal(os.Interrupt)
	_ = d.Cmd.Wait()
}

// CLI runs the binary's CLI against the daemon and returns its output.
func (d *Daemon) CLI(args ...string) (string, error) {
	cmd := exec.Command(d.Bin, args...)
	cmd.Env = append(os.Environ(), "FLINKGO_HOME="+d.Home, "FLINKGO_ADDRESS=")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("flinkgo %v: %v: %s", args, err, ee.Stderr)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
