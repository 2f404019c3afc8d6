package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The shipped configs/flinkgo.yaml documents every key with its default.
func TestShippedConfigDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../configs/flinkgo.yaml")
	require.NoError(t, err)
	for _, k := range keys {
		re := regexp.MustCompile(`(?m)^# ` + regexp.QuoteMeta(k.name) + `: `)
		require.Regexp(t, re, string(data), "configs/flinkgo.yaml does not document %s", k.name)
	}
	// Uncommented, the file is a valid config.
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if m := regexp.MustCompile(`^# ([a-z-]+\.[a-z.-]+): (.*)$`).FindStringSubmatch(l); m != nil {
			lines = append(lines, m[1]+": "+m[2])
		}
	}
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "flinkgo.yaml"), []byte(strings.Join(lines, "\n")), 0o600))
	_, err = Load(home, "", nil)
	require.NoError(t, err)
}

func TestDefaults(t *testing.T) {
	home := t.TempDir()
	c, err := Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8081", c.RestAddress)
	require.Equal(t, filepath.Join(home, "checkpoints"), c.CheckpointsDir)
	require.Equal(t, filepath.Join(home, "savepoints"), c.SavepointsDir, "savepoint and stop without a directory write where the shutdown savepoints go")
	require.Nil(t, c.Checkpointing.Interval)
	require.Equal(t, "", c.File)
}

func TestPrecedenceFlagsEnvFile(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "flinkgo.yaml"), []byte(`
state:
  savepoints:
    dir: /from/file
rest.address: 127.0.0.1:9999
execution.checkpointing.interval: 5s
`), 0o600))
	c, err := Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, "/from/file", c.SavepointsDir)
	require.Equal(t, "127.0.0.1:9999", c.RestAddress)
	require.Equal(t, api.Duration(5e9), *c.Checkpointing.Interval)

	t.Setenv("FLINKGO_STATE_SAVEPOINTS_DIR", "/from/env")
	t.Setenv("FLINKGO_REST_ADDRESS", "")
	c, err = Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, "/from/env", c.SavepointsDir)
	require.Equal(t, "", c.RestAddress, "an empty env value disables the REST listener")

	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("savepoints-dir", "", "")
	require.NoError(t, fs.Parse([]string{"--savepoints-dir", "/from/flag"}))
	c, err = Load(home, "", map[string]*pflag.Flag{"state.savepoints.dir": fs.Lookup("savepoints-dir")})
	require.NoError(t, err)
	require.Equal(t, "/from/flag", c.SavepointsDir)
}

func TestBadConfigNamesKeyAndLine(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "flinkgo.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`rest.address: 127.0.0.1:1
state.checkpoint.dir: /x
execution:
  checkpointing:
    interval: soon
    mode: twice
execution.checkpointing.min-pause: 1s
execution.checkpointing.max-concurrent-checkpoints: 2
`), 0o600))
	_, err := Load(home, "", nil)
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, file+`:2:1: state.checkpoint.dir: unknown configuration key "state.checkpoint.dir"; did you mean "state.checkpoints.dir"?`)
	require.Equal(t, api.CodeInvalid, api.CodeOf(err))

	require.NoError(t, os.WriteFile(file, []byte("execution.checkpointing.interval: soon\nexecution.checkpointing.mode: twice\n"), 0o600))
	_, err = Load(home, "", nil)
	require.ErrorContains(t, err, file+`:1:35: execution.checkpointing.interval: "soon" is not a duration`)
	require.ErrorContains(t, err, file+`:2:31: execution.checkpointing.mode: must be EXACTLY_ONCE or AT_LEAST_ONCE`)

	t.Setenv("FLINKGO_EXECUTION_CHECKPOINTING_TIMEOUT", "never")
	require.NoError(t, os.WriteFile(file, []byte("execution.checkpointing.min-pause: 1s\nexecution.checkpointing.max-concurrent-checkpoints: 2\n"), 0o600))
	_, err = Load(home, "", nil)
	require.ErrorContains(t, err, "from environment variable FLINKGO_EXECUTION_CHECKPOINTING_TIMEOUT")
	require.ErrorContains(t, err, "flinkgo.yaml:1:36: execution.checkpointing.min-pause: execution.checkpointing.min-pause 1s with execution.checkpointing.max-concurrent-checkpoints 2 is inconsistent")

	_, err = Load(home, filepath.Join(home, "missing.yaml"), nil)
	require.ErrorContains(t, err, "missing.yaml")
}

// daemon.gc-heap-floor is a size, off (0) unless set.
func TestGCHeapFloor(t *testing.T) {
	home := t.TempDir()
	c, err := Load(home, "", nil)
	require.NoError(t, err)
	require.Zero(t, c.GCHeapFloor)
	t.Setenv("FLINKGO_DAEMON_GC_HEAP_FLOOR", "64MiB")
	c, err = Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, int64(64<<20), c.GCHeapFloor)
	t.Setenv("FLINKGO_DAEMON_GC_HEAP_FLOOR", "256MiB")
	c, err = Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, int64(256<<20), c.GCHeapFloor)
	t.Setenv("FLINKGO_DAEMON_GC_HEAP_FLOOR", "lots")
	_, err = Load(home, "", nil)
	require.ErrorContains(t, err, `daemon.gc-heap-floor: "lots" is not a size`)
}
