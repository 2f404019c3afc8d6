package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startLog starts a daemon with config and returns what it logged at start.
func startLog(t *testing.T, conf string) string {
	home := t.TempDir()
	file := filepath.Join(home, "flinkgo.yaml")
	require.NoError(t, os.WriteFile(file, []byte(conf), 0o600))
	cfg, err := config.Load(home, file, nil)
	require.NoError(t, err)
	var log syncBuffer
	d, err := daemon.Start(daemon.Options{Config: cfg, Log: zerolog.New(&log), Registry: all.Registry()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, d.Shutdown(ctx))
	return log.String()
}

// A daemon on TCP without security.allowed-paths says so at start; one on
// the socket only, or with the paths set, does not.
func TestDaemonWarnsOfUnsetAllowedPathsOnTCP(t *testing.T) {
	const warning = "security.allowed-paths is unset"
	require.Contains(t, startLog(t, "rest.address: 127.0.0.1:0\n"), warning)
	require.NotContains(t, startLog(t, "rest.address: \"\"\n"), warning)
	require.NotContains(t, startLog(t, fmt.Sprintf("rest.address: 127.0.0.1:0\nsecurity.allowed-paths: %s\n", t.TempDir())), warning)
}
