// Package daemon is flinkgo's local "cluster": it owns the home directory,
// the job registry and the control API, runs jobs, and resumes them after a
// restart or crash.
package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon/dashboard"
	"github.com/flinkgo/flinkgo/internal/ha"
	"github.com/flinkgo/flinkgo/internal/storage"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Options configure a daemon.
type Options struct {
	Config *config.Config
	Log    zerolog.Logger
	// Stdout receives print sink output (the daemon's stdout).
	Stdout io.Writer
	// FS is the filesystem for state and sinks (vfs.Default).
	FS vfs.FS
	// Faults is the fault-injection hook for tests (nil in production).
	Faults runtime.FaultHook
	// RestoreOnStart resumes the jobs suspended at the last shutdown; when
	// false they stay SUSPENDED (restore them by hand with run -s).
	RestoreOnStart bool
	// Registry holds the operator types jobs may use.
	Registry *runtime.Registry
	// Cluster is HA mode's membership (nil: one daemon on its own): the
	// registry lives in etcd, jobs may run on any daemon of the cluster.
	Cluster *ha.Node
	// Storage adds to the s3.* configuration (tests inject faults).
	Storage storage.Options
	// noSampler turns the sampler off (a benchmark's baseline): no rates,
	// shares of time, history or checkpoint events.
	noSampler bool
}

// Daemon runs jobs and serves the control API.
type Daemon struct {
	cfg    *config.Config
	log    zerolog.Logger
	fs     vfs.FS
	faults runtime.FaultHook
	types  *runtime.Registry
	// restoreOnStart: see Options.RestoreOnStart.
	restoreOnStart bool
	stdout         *lockedWriter
	reg            *registry
	token          string
	catalog        savepointCatalog
	// sessions are the dashboard's browser logins.
	sessions *dashboard.Sessions
	// samplerStop and samplerDone stop and wait for the sampler
	// (sampler.go).
	samplerStop, samplerDone chan struct{}
	// cluster: see Options.Cluster (cluster.go).
	cluster *ha.Node

	lock      *os.File
	listeners []net.Listener
	servers   []*http.Server

	// submits limits job submissions per client.
	submits *submitLimiter
	// submitMu serialises submissions from their output check to their
	// start, so two jobs cannot claim one directory at once.
	submitMu sync.Mutex
	mu       sync.Mutex
	jobs     map[string]*entry
	// watchers record each job's end in the registry; Shutdown waits for
	// them so nothing writes the home after it returns.
	watchers sync.WaitGroup
}

// SocketPath is the control socket under home.
func SocketPath(home string) string { return filepath.Join(home, "flinkgo.sock") }

// TokenPath is the bearer token file under home.
func TokenPath(home string) string { return filepath.Join(home, "token") }

// Start prepares the home directory, takes the daemon lock, resumes jobs
// from the registry and starts serving. It returns when the daemon is ready.
func Start(o Options) (_ *Daemon, err error) {
	cfg := o.Config
	if o.FS == nil {
		local := vfs.Default
		if len(cfg.AllowedPaths) > 0 {
			local = vfs.Confined(allowedRoots(cfg.AllowedPaths))
		}
		if o.FS, err = storage.FS(cfg.S3, local, nil, o.Storage); err != nil {
			return nil, err
		}
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Registry == nil {
		return nil, errors.New("daemon: no operator registry (bug)")
	}
	d := &Daemon{cfg: cfg, log: o.Log, fs: o.FS, faults: o.Faults, types: o.Registry, restoreOnStart: o.RestoreOnStart, stdout: &lockedWriter{w: o.Stdout},
		reg: &registry{fs: o.FS, dir: filepath.Join(cfg.Home, "jobs"), checkpointsDir: cfg.CheckpointsDir, cluster: o.Cluster}, jobs: map[string]*entry{},
		cluster: o.Cluster, submits: newSubmitLimiter(cfg.SubmitRateLimit)}
	defer func() {
		if err != nil {
			d.closeListeners()
			d.releaseLock()
		}
	}()
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return nil, fmt.Errorf("create FLINKGO_HOME %s: %w", cfg.Home, err)
	}
	if err := os.Chmod(cfg.Home, 0o700); err != nil {
		return nil, err
	}
	if err := d.acquireLock(); err != nil {
		return nil, err
	}
	if d.token, err = loadOrCreateToken(TokenPath(cfg.Home), d.clusterToken()); err != nil {
		return nil, err
	}
	if err := d.listen(); err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(d.RestAddr())
	d.sessions = dashboard.NewSessions(nil, port)
	if addr := d.RestAddr(); addr != "" {
		// Tell local tools where the REST API ended up (rest.address may
		// name port 0).
		_ = os.WriteFile(filepath.Join(cfg.Home, "rest.address"), []byte(addr+"\n"), 0o600)
	}
	d.recover()
	if !o.noSampler {
		d.startSampler()
	}
	if err := d.serve(); err != nil {
		d.stopSampler()
		return nil, err
	}
	d.joinCluster()
	d.log.Info().Str("home", cfg.Home).Str("socket", SocketPath(cfg.Home)).Str("rest", d.RestAddr()).
		Str("checkpoints", cfg.CheckpointsDir).Msg("daemon started")
	if addr := d.RestAddr(); addr != "" {
		// No login link here: logs outlive the link and are read by others.
		d.log.Info().Str("url", "http://"+dashboardHost(addr)+"/").
			Msg("dashboard: open the url to watch jobs; `flinkgo ui` gives a one-time login link that enables its buttons")
		if !isLoopbackAddr(addr) {
			d.log.Warn().Str("rest", addr).Msg("rest.address is not a loopback address: anyone who reaches it can read jobs, specs, print output and savepoint listings (changes still need the token or a dashboard login)")
		}
		if len(cfg.AllowedPaths) == 0 {
			d.log.Warn().Str("rest", addr).Msg("security.allowed-paths is unset: a token holder on the REST API may name any absolute path as a savepoint to read or a target to write (set it to the directories savepoints may live in)")
		}
	}
	return d, nil
}

// acquireLock makes sure one daemon owns the home directory.
func (d *Daemon) acquireLock() error {
	path := filepath.Join(d.cfg.Home, "daemon.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := io.ReadAll(f)
		_ = f.Close()
		who := strings.TrimSpace(string(pid))
		if who != "" {
			who = " (pid " + who + ")"
		}
		return fmt.Errorf("another flinkgo daemon%s is already running with FLINKGO_HOME %s; stop it first or use another home", who, d.cfg.Home)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	d.lock = f
	return nil
}

func (d *Daemon) releaseLock() {
	if d.lock != nil {
		_ = d.lock.Close()
		d.lock = nil
	}
}

// loadOrCreateToken reads the token file, or writes a new random token, or
// the given one (an HA cluster's) when not "".
func loadOrCreateToken(path, given string) (string, error) {
	data, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(data))) >= 32 && (given == "" || strings.TrimSpace(string(data)) == given) {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", err
		}
		return strings.TrimSpace(string(data)), nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b[:])
	if given != "" {
		tok = given
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token: %w", err)
	}
	return tok, os.Chmod(path, 0o600)
}

// listen opens the unix socket (0600) and the TCP listener.
func (d *Daemon) listen() error {
	sock := SocketPath(d.cfg.Home)
	_ = os.Remove(sock) // we hold the lock: any socket here is stale
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", sock)
	syscall.Umask(old)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", sock, err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		_ = ln.Close()
		return err
	}
	d.listeners = append(d.listeners, ln)
	if d.cfg.RestAddress != "" {
		tcp, err := net.Listen("tcp", d.cfg.RestAddress)
		if err != nil {
			return fmt.Errorf("listen on rest.address %s: %w (set rest.address to another address, or empty to disable)", d.cfg.RestAddress, err)
		}
		d.listeners = append(d.listeners, tcp)
	}
	return nil
}

func (d *Daemon) serve() error {
	for i, ln := range d.listeners {
		var h http.Handler
		if i == 0 {
			h = d.handler(false) // the unix socket: its 0600 mode is the access control
		} else {
			hosts, err := dashboard.NewHostPolicy(ln.Addr().String(), d.cfg.AllowedHosts)
			if err != nil {
				return err
			}
			h = hosts.Wrap(d.handler(true))
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
			WriteTimeout: writeTimeout, IdleTimeout: d.cfg.IdleTimeout}
		d.servers = append(d.servers, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error().Err(err).Msg("control API stopped")
			}
		}()
	}
	return nil
}

// RestAddr is the TCP address actually listened on ("" when disabled).
func (d *Daemon) RestAddr() string {
	if len(d.listeners) < 2 {
		return ""
	}
	return d.listeners[1].Addr().String()
}

// Token is the bearer token for the TCP API.
func (d *Daemon) Token() string { return d.token }

func (d *Daemon) closeListeners() {
	for _, ln := range d.listeners {
		_ = ln.Close()
	}
}

// Shutdown stops serving, stops each running job with a savepoint (bounded
// by daemon.shutdown-savepoint-timeout; past it the job is suspended without
// one), leaving them SUSPENDED to be resumed on the next start, and
// releases the home directory.
func (d *Daemon) Shutdown(ctx context.Context) error {
	for _, s := range d.servers {
		_ = s.Shutdown(ctx)
	}
	d.closeListeners()
	d.stopSampler()
	if d.suspendAll(ctx, d.active()) {
		d.watchers.Wait() // every job ended: their last registry writes follow at once
	} else {
		d.log.Warn().Msg("jobs did not stop in time")
	}
	d.mu.Lock()
	for _, e := range d.jobs {
		e.closeOut()
	}
	d.mu.Unlock()
	_ = os.Remove(SocketPath(d.cfg.Home))
	d.releaseLock()
	d.log.Info().Msg("daemon stopped")
	return nil
}

// active are the jobs running here.
func (d *Daemon) active() []*entry {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*entry
	for _, e := range d.jobs {
		if e.job != nil && e.job.State().Active() {
			out = append(out, e)
		}
	}
	return out
}

// suspendAll suspends jobs at once (each with a savepoint, see suspend)
// and reports whether all ended before ctx did.
func (d *Daemon) suspendAll(ctx context.Context, jobs []*entry) bool {
	var wg sync.WaitGroup
	for _, e := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.suspend(e)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// suspend stops a job with a savepoint for the daemon's shutdown.
func (d *Daemon) suspend(e *entry) {
	log := d.log.With().Str("job", e.rec.ID).Logger()
	dir := d.cfg.SavepointsDir
	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		path, _, err := e.job.SuspendWithSavepoint(dir)
		done <- result{path, err}
	}()
	timer := time.NewTimer(d.cfg.ShutdownSavepointTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err == nil {
			log.Info().Str("savepoint", r.path).Msg("job stopped with a savepoint for shutdown; it resumes from it at the next start")
			<-e.job.Done()
			return
		}
		log.Warn().Err(r.err).Msg("shutdown savepoint failed; suspending the job (it resumes from its latest checkpoint)")
		_ = e.job.Suspend()
	case <-timer.C:
		log.Warn().Dur("timeout", d.cfg.ShutdownSavepointTimeout).Msg("shutdown savepoint too slow; suspending the job (it resumes from its latest checkpoint)")
		_ = e.job.Suspend()
		<-done // the stop's answer, once the job ended: done is received once
	}
	<-e.job.Done()
}

// lockedWriter serialises writes from concurrent print sinks.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// LoginLink mints a one-time link that logs a browser in to the dashboard.
func (d *Daemon) LoginLink() api.LoginLink {
	base := "http://" + dashboardHost(d.RestAddr())
	code, expires := d.sessions.NewLoginCode()
	return api.LoginLink{URL: base + "/ui/login?code=" + code, Dashboard: base + "/", Expires: expires}
}

// dashboardHost is the address a local browser should open: a listener on
// all interfaces is reached through loopback.
func dashboardHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// isLoopbackAddr reports whether a listener address is on loopback only.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
