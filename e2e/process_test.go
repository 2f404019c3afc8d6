package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

// spawnDaemon starts `flinkgo daemon` like startDaemon but returns at once,
// before the daemon is ready: a kill can then land in its startup.
func (e *env) spawnDaemon(args ...string) {
	e.t.Helper()
	cmd := exec.Command(e.binary(), append([]string{"daemon", "--rest-address", "127.0.0.1:0"}, args...)...)
	cmd.Env = e.environ()
	e.stdout, e.stderr = &syncWriter{}, &syncWriter{}
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	require.NoError(e.t, cmd.Start())
	e.daemon = cmd
	e.t.Cleanup(func() { e.killDaemon() })
}

// waitReady waits until a spawned daemon answers on its socket.
func (e *env) waitReady(timeout time.Duration) {
	e.t.Helper()
	c := e.client()
	defer c.Close()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.List(ctx, true)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("daemon did not become ready in %s: %s", timeout, e.stderr.String())
}

// client is a typed client on the daemon's unix socket (no token needed).
func (e *env) client() *client.Client {
	c, err := client.New(filepath.Join(e.home, "flinkgo.sock"), "")
	require.NoError(e.t, err)
	return c
}

// jobInfo reads a job's info over the socket (cheaper than spawning the
// CLI in a polling loop).
func (e *env) jobInfo(id string) (*api.JobInfo, error) {
	c := e.client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Info(ctx, id)
}

// crash kills the daemon with SIGKILL and reports whether it was still
// running (and so died of the kill rather than of something else). The
// daemon's exit status when it ended on its own is in the error.
func (e *env) crash() (killed bool, err error) {
	e.t.Helper()
	cmd := e.daemon
	require.NotNil(e.t, cmd, "no daemon to kill")
	e.daemon = nil
	_ = cmd.Process.Signal(syscall.SIGKILL)
	werr := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return true, nil
	}
	return false, werr
}

// panicOrRace matches what a Go panic (also one recovered and logged with
// its stack), a fatal runtime error or the race detector prints.
var panicOrRace = regexp.MustCompile(`panic: |fatal error: |WARNING: DATA RACE|goroutine \d+ \[`)

// requireNoPanic fails when output shows a panic, a fatal error or a race.
func requireNoPanic(t *testing.T, what, output string) {
	t.Helper()
	if loc := panicOrRace.FindStringIndex(output); loc != nil {
		from := max(loc[0]-2000, 0)
		t.Fatalf("%s shows a panic or a data race:\n%s", what, output[from:min(len(output), loc[0]+4000)])
	}
}

// tcpRequest sends a request to the daemon's TCP listener with an optional
// bearer token and returns the status and body.
func (e *env) tcpRequest(method, path, token string, body []byte) (int, string) {
	e.t.Helper()
	req := newRequest(e.t, method, "http://"+e.restAddress()+path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return doRequest(e.t, http.DefaultClient, req)
}

// sockRequest sends a request over the unix socket (trusted, no token).
func (e *env) sockRequest(method, path string, body []byte) (int, string) {
	e.t.Helper()
	sock := filepath.Join(e.home, "flinkgo.sock")
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	return doRequest(e.t, hc, newRequest(e.t, method, "http://unix"+path, body))
}

func newRequest(t *testing.T, method, url string, body []byte) *http.Request {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func doRequest(t *testing.T, hc *http.Client, req *http.Request) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := hc.Do(req.WithContext(ctx))
	require.NoError(t, err, "%s %s", req.Method, req.URL)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "%s %s: read body", req.Method, req.URL)
	return resp.StatusCode, string(b)
}

// token reads the daemon's bearer token.
func (e *env) token() string {
	b, err := os.ReadFile(filepath.Join(e.home, "token"))
	require.NoError(e.t, err)
	return strings.TrimSpace(string(b))
}

// treeSnapshot lists every path under dir with its size and mtime, to show
// that an operation wrote nothing. A missing dir is an empty snapshot.
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		out[p] = fi.Mode().String() + " " + strconv.FormatInt(fi.Size(), 10) + " " + fi.ModTime().Format(time.RFC3339Nano)
		return nil
	})
	require.NoError(t, err)
	return out
}
