package natsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultListen is the address a server listens on when Config.Listen is
// empty: NATS's usual port, loopback only.
const DefaultListen = "127.0.0.1:4222"

const (
	// startTimeout bounds how long Start waits for the server to accept
	// connections.
	startTimeout = 10 * time.Second
	// adminTimeout bounds the stream requests of Start and CreateStream.
	adminTimeout = 10 * time.Second
)

// ErrClosed is returned by methods of a closed Server.
var ErrClosed = errors.New("nats server closed")

// Config configures a Server. The zero value is a server on DefaultListen
// with JetStream in memory and no streams.
type Config struct {
	// Listen is the host:port to listen on, DefaultListen when empty.
	// Port 0 picks a free port; Server.URL reports it.
	Listen string

	// StoreDir, if set, keeps JetStream streams and consumers there
	// (file storage), so that a Start on the same StoreDir resumes them.
	// Without it streams are created in memory and vanish at Close.
	StoreDir string

	// Streams are created at Start unless a stream of that name exists
	// already (loaded from StoreDir); an existing stream is left as it is.
	Streams []Stream
}

// Server is a running embedded NATS server. Its methods are safe for
// concurrent use.
type Server struct {
	ns      *server.Server
	url     string
	tmpDir  string // JetStream store of a server without StoreDir
	storage jetstream.StorageType

	mu     sync.Mutex
	closed bool
}

// Start starts a server with JetStream and creates cfg.Streams. It returns
// once the server accepts connections; nothing is left running on error.
func Start(cfg Config) (*Server, error) {
	for _, st := range cfg.Streams {
		if err := st.Validate(); err != nil {
			return nil, fmt.Errorf("nats server: %w", err)
		}
	}
	host, port, err := splitListen(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("nats server: listen %q: %w", cfg.Listen, err)
	}
	if port != server.RANDOM_PORT {
		// The server only logs a failed listen (and we silence its log):
		// check the address first for a quick, clear error.
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return nil, fmt.Errorf("nats server: %w", err)
		}
		ln.Close()
	}
	s := &Server{storage: jetstream.FileStorage}
	store := cfg.StoreDir
	if store == "" {
		if s.tmpDir, err = os.MkdirTemp("", "flinkgo-nats-"); err != nil {
			return nil, fmt.Errorf("nats server: %w", err)
		}
		store, s.storage = s.tmpDir, jetstream.MemoryStorage
	}
	opts := &server.Options{ServerName: "flinkgo-dev", Host: host, Port: port, JetStream: true, StoreDir: store,
		NoLog: true, NoSigs: true}
	if s.ns, err = server.NewServer(opts); err != nil {
		s.removeTmp()
		return nil, fmt.Errorf("nats server: %w", err)
	}
	go s.ns.Start()
	if !s.ns.ReadyForConnections(startTimeout) {
		s.shutdown()
		return nil, fmt.Errorf("nats server: not ready for connections on %s after %s (address in use?)", net.JoinHostPort(host, strconv.Itoa(port)), startTimeout)
	}
	s.url = s.ns.ClientURL()
	for _, st := range cfg.Streams {
		if err := s.CreateStream(st); err != nil {
			s.shutdown()
			return nil, err
		}
	}
	return s, nil
}

// splitListen parses host:port; port 0 asks for a free port.
func splitListen(listen string) (string, int, error) {
	if listen == "" {
		listen = DefaultListen
	}
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// URL is the client URL (nats://host:port), with the port actually chosen.
func (s *Server) URL() string { return s.url }

// CreateStream creates a stream unless one of that name exists (which is
// left unchanged).
func (s *Server) CreateStream(st Stream) error {
	if err := st.Validate(); err != nil {
		return fmt.Errorf("nats server: %w", err)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	nc, err := nats.Connect(s.url, nats.Name("flinkgo dev nats"))
	if err != nil {
		return fmt.Errorf("nats server: connect: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("nats server: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if _, err := js.Stream(ctx, st.Name); err == nil {
		return nil
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("nats server: look up stream %s: %w", st.Name, err)
	}
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: st.Name, Subjects: st.subjects(), Storage: s.storage})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("nats server: create stream %s: %w", st, err)
	}
	return nil
}

// Close shuts the server down and waits until it has stopped; a server
// without StoreDir loses its streams. Close is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.shutdown()
	return nil
}

func (s *Server) shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	s.removeTmp()
}

func (s *Server) removeTmp() {
	if s.tmpDir != "" {
		_ = os.RemoveAll(s.tmpDir)
	}
}
