// Package pgserver runs a PostgreSQL server from the machine's own
// installation (Debian's postgresql package: initdb and postgres on PATH or
// under /usr/lib/postgresql/<version>/bin) in a directory of its own, on a
// free loopback port, for the database connectors' tests and `flinkgo dev`.
//
// The server is set up for what the connectors need: wal_level=logical
// (the CDC source's replication slots) and max_prepared_transactions > 0
// (the exactly-once sink's two-phase commit). Authentication is trust on
// loopback: FOR DEVELOPMENT ONLY.
//
// PostgreSQL refuses to run as root. Started by root (a container, CI), the
// server runs as the "postgres" user the package creates (or "nobody"), in
// a directory that user owns.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// startTimeout bounds initdb plus the server's start.
const startTimeout = 60 * time.Second

// Config configures a Server.
type Config struct {
	// Dir holds the data directory and the socket; empty: a new temporary
	// directory, removed by Close.
	Dir string
	// Port on 127.0.0.1; 0: a free port.
	Port int
	// MaxPreparedTransactions (default 20).
	MaxPreparedTransactions int
	// Settings are more postgresql.conf lines ("name = value").
	Settings []string
}

// Server is a running PostgreSQL server. Its methods are safe for
// concurrent use.
type Server struct {
	mu      sync.Mutex
	bin     string
	dir     string
	owned   bool // dir was made here: Close removes it
	port    int
	cred    *syscall.Credential
	running bool
}

// Binary returns the directory holding initdb and postgres, or an error
// saying how to install them.
func Binary() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL is not installed (no initdb on PATH or under /usr/lib/postgresql/*/bin): apt-get install postgresql")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises a data directory and starts the server.
func Start(c Config) (_ *Server, err error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: c.Dir, port: c.Port}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "flinkgo-pg-"); err != nil {
			return nil, err
		}
		s.owned = true
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			return nil, err
		}
		// The server's user must reach its directory through the parents.
		for d := s.dir; d != "/" && d != "."; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o011 == 0 {
				_ = os.Chmod(d, fi.Mode().Perm()|0o011)
			}
		}
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, err
		}
	}
	if s.port == 0 {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.cmd(ctx, "initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions").Run(); err != nil {
		return nil, fmt.Errorf("pgserver: initdb: %w", err)
	}
	mpt := c.MaxPreparedTransactions
	if mpt <= 0 {
		mpt = 20
	}
	conf := []string{
		"listen_addresses = '127.0.0.1'",
		"port = " + strconv.Itoa(s.port),
		"unix_socket_directories = '" + s.dir + "'",
		"wal_level = logical",
		"max_wal_senders = 10",
		"max_replication_slots = 10",
		"max_prepared_transactions = " + strconv.Itoa(mpt),
		"max_connections = 100",
		"fsync = off",
		"synchronous_commit = off",
		"full_page_writes = off",
		"shared_buffers = 32MB",
		"log_min_messages = warning",
	}
	conf = append(conf, c.Settings...)
	f, err := os.OpenFile(filepath.Join(s.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString("\n" + strings.Join(conf, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	hba := "local all all trust\nhost all all 127.0.0.1/32 trust\nlocal replication all trust\nhost replication all 127.0.0.1/32 trust\n"
	if err := os.WriteFile(filepath.Join(s.data(), "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(filepath.Join(s.data(), "pg_hba.conf"), int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, err
		}
	}
	return s, s.Start()
}

// Start starts a stopped server again (Stop, or Kill).
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := s.cmd(ctx, "pg_ctl", "start", "-w", "-t", "50", "-D", s.data(), "-l", filepath.Join(s.dir, "server.log")).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		return fmt.Errorf("pgserver: pg_ctl start: %w: %s\n%s", err, out, tail(string(log), 2000))
	}
	s.running = true
	return nil
}

// Stop shuts the server down (fast mode: clients are disconnected, open
// transactions roll back, prepared ones stay).
func (s *Server) Stop() error { return s.stop("fast") }

// Kill stops the server as a crash would (immediate mode: no checkpoint;
// the next start recovers from the WAL).
func (s *Server) Kill() error { return s.stop("immediate") }

func (s *Server) stop(mode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := s.cmd(ctx, "pg_ctl", "stop", "-w", "-m", mode, "-D", s.data()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgserver: pg_ctl stop: %w: %s", err, out)
	}
	s.running = false
	return nil
}

// Close stops the server and removes a directory Start made.
func (s *Server) Close() {
	_ = s.Kill()
	if s.owned {
		_ = os.RemoveAll(s.dir)
	}
}

// URL is a connection URL for database db ("postgres" when empty) as the
// superuser postgres, over TCP on loopback.
func (s *Server) URL(db string) string {
	if db == "" {
		db = "postgres"
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Port is the server's TCP port.
func (s *Server) Port() int { return s.port }

// Log is the server's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return string(b)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

// unprivileged is the user a root process runs the server as.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, errors.New("pgserver: running as root and no postgres or nobody user to run PostgreSQL as")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgserver: find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
