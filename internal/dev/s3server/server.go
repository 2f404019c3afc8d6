// Package s3server runs a local S3 server for development and tests:
// versitygw (Apache-2.0, `go install github.com/versity/versitygw/cmd/versitygw@v1.8.0`)
// with its posix backend, on loopback, with root keys of its own. It is
// what `flinkgo dev s3` starts and what the tests talk to: a real S3
// implementation that enforces the 5 MiB part minimum and If-None-Match.
package s3server

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
	"os/exec"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/flinkgo/flinkgo/pkg/vfs/s3store"
)

// InstallHint says how to get the server.
const InstallHint = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Binary finds versitygw: $FLINKGO_VERSITYGW, PATH, then $(go env GOPATH)/bin.
func Binary() (string, error) {
	if p := os.Getenv("FLINKGO_VERSITYGW"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if gp := os.Getenv("GOPATH"); gp != "" {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		dirs = append(dirs, filepath.Join(string(trimNL(out)), "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("versitygw not found (PATH, $(go env GOPATH)/bin): install it with `%s`", InstallHint)
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Config configures a server.
type Config struct {
	Listen string // host:port; default 127.0.0.1 and a free port
	Dir    string // the posix backend's root: one directory per bucket
	// AccessKey and SecretKey are the root user's; random when empty.
	AccessKey, SecretKey string
	Buckets              []string // created at start
	Log                  io.Writer
}

// Server is a running versitygw.
type Server struct {
	Endpoint             string // http://host:port
	AccessKey, SecretKey string
	Dir                  string
	cmd                  *exec.Cmd
	done                 chan error
}

// Start starts versitygw and waits until it serves requests.
func Start(c Config) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if c.Listen == "" {
		if c.Listen, err = freePort(); err != nil {
			return nil, err
		}
	}
	if c.AccessKey == "" {
		c.AccessKey, c.SecretKey = "flinkgo"+randomHex(4), randomHex(16)
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", c.Listen, "--quiet", "posix", c.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+c.AccessKey, "ROOT_SECRET_KEY="+c.SecretKey)
	cmd.Stdout, cmd.Stderr = c.Log, c.Log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &Server{Endpoint: "http://" + c.Listen, AccessKey: c.AccessKey, SecretKey: c.SecretKey, Dir: c.Dir, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(c.Buckets); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(buckets []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	st, err := s.Store(s3store.Options{MaxAttempts: 1, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		return err
	}
	for {
		conn, err := net.DialTimeout("tcp", s.Endpoint[len("http://"):], time.Second)
		if err == nil {
			_ = conn.Close()
			break
		}
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("versitygw exited at start: %v", err)
		case <-ctx.Done():
			return errors.New("versitygw did not start within 20s")
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, b := range buckets {
		if err := st.CreateBucket(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// Options are the client options that reach the server.
func (s *Server) Options() s3store.Options {
	return s3store.Options{Endpoint: s.Endpoint, Region: "us-east-1", PathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")}
}

// Store returns a client of the server; o's zero fields take the server's.
func (s *Server) Store(o s3store.Options) (*s3store.Store, error) {
	base := s.Options()
	if o.HTTPClient != nil {
		base.HTTPClient = o.HTTPClient
	}
	base.MaxAttempts, base.MaxBackoff = o.MaxAttempts, o.MaxBackoff
	return s3store.New(context.Background(), base)
}

// Env is the environment a flinkgo daemon (and the AWS chain) needs to
// reach the server: credentials as AWS_* variables, endpoint and path
// style as FLINKGO_S3_* (config keys).
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey, "AWS_REGION=us-east-1",
		"FLINKGO_S3_ENDPOINT=" + s.Endpoint, "FLINKGO_S3_PATH_STYLE_ACCESS=true"}
}

// Close stops the server.
func (s *Server) Close() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	err := <-s.done
	s.done <- err
}

// Wait returns when the server exited.
func (s *Server) Wait() error {
	err := <-s.done
	s.done <- err
	return err
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
