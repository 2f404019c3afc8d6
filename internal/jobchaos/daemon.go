package jobchaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/pkg/client"
)

// child is a daemon process of a run: the flinkgo binary itself, run as
// `flinkgo daemon` in the run's own home (its own socket, registry,
// checkpoints and savepoints) with no REST port, so it touches nothing of
// the user's daemon. A kill is a real SIGKILL of that process.
type child struct {
	exe  string
	home string
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd has been waited for
	err  error         // Wait's result, after done
	log  *os.File
	// exitFault is the FLINKGO_FAULTS rule the process runs with ("": none).
	exitFault string
	// logStart is the log's size when the process started.
	logStart int64
}

func newChild(exe, home string) (*child, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	log, err := os.OpenFile(filepath.Join(home, "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &child{exe: exe, home: home, log: log}, nil
}

// start starts the daemon with the fault rule faults ("" for none) and
// waits until it answers on its socket. A daemon that exits while starting
// (a fault at task.open fires during its recovery) is not an error: the
// caller sees it exited.
func (c *child) start(ctx context.Context, faults string) error {
	fmt.Fprintf(c.log, "flinkgo chaos: starting the daemon (faults %q) at %s\n", faults, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(c.exe, "daemon", "--rest-address=")
	env := []string{"FLINKGO_HOME=" + c.home}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "FLINKGO_HOME", "FLINKGO_ADDRESS", "FLINKGO_TOKEN", fault.EnvVar:
			continue
		}
		env = append(env, kv)
	}
	if faults != "" {
		env = append(env, fault.EnvVar+"="+faults)
	}
	cmd.Env, cmd.Dir = env, c.home
	cmd.Stdout, cmd.Stderr = c.log, c.log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the daemon (%s daemon): %w", c.exe, err)
	}
	if fi, err := c.log.Stat(); err == nil {
		c.logStart = fi.Size()
	}
	c.cmd, c.done, c.exitFault = cmd, make(chan struct{}), faults
	go func() { c.err = cmd.Wait(); close(c.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c.exited() {
			return nil
		}
		if err := c.ping(ctx); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			c.kill()
			return fmt.Errorf("the daemon did not answer within a minute of its start; its log: %s", c.log.Name())
		}
		select {
		case <-ctx.Done():
			c.kill()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (c *child) ping(ctx context.Context) error {
	cl, err := c.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = cl.List(ctx, false)
	return err
}

func (c *child) client() (*client.Client, error) {
	return client.New(daemon.SocketPath(c.home), "")
}

// running reports whether the process has been started and not exited.
func (c *child) running() bool { return c.cmd != nil && !c.exited() }

func (c *child) exited() bool {
	if c.done == nil {
		return true
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// exitCode is the code the process exited with (-1 killed by a signal).
func (c *child) exitCode() int {
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *child) kill() {
	if !c.running() {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// stop shuts the daemon down as SIGTERM does (its finished jobs have
// committed everything; a job still running is suspended with a
// savepoint), waiting at most a minute before it kills it.
func (c *child) stop() {
	if !c.running() {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(time.Minute):
		c.kill()
	}
}

// close stops the daemon if it runs and closes its log.
func (c *child) close() {
	c.kill()
	_ = c.log.Close()
}

// logTail is the end of the daemon's log, for an error.
func (c *child) logTail() string {
	b, err := os.ReadFile(c.log.Name())
	if err != nil {
		return ""
	}
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// firedFault reports whether the log says the process's fault rule fired
// ("flinkgo: injected fault: <point> exit ...", written before the exit).
func (c *child) firedFault(point string) bool {
	b, err := os.ReadFile(c.log.Name())
	if err != nil || int64(len(b)) < c.logStart {
		return false
	}
	b = b[c.logStart:]
	return strings.Contains(string(b), "injected fault: "+point+" exit")
}
