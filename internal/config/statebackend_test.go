package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestStateBackendKeys(t *testing.T) {
	home := t.TempDir()
	c, err := Load(home, "", nil)
	require.NoError(t, err)
	require.Equal(t, api.BackendHashMap, c.StateBackend)
	require.Equal(t, filepath.Join(home, "pebble"), c.PebbleLocalDir)
	require.False(t, c.StateIncremental)

	for _, tc := range []struct {
		name, file, want string
	}{
		{"pebble", "state.backend.type: PEBBLE\nstate.backend.pebble.localdir: /data/pebble\nstate.backend.incremental: true\n", ""},
		{"rocksdb", "state:\n  backend:\n    type: rocksdb\n", `flinkgo.yaml:3:11: state.backend.type: "rocksdb" is not available: flinkgo's on-disk state backend is pebble`},
		{"unknown", "state.backend.type: leveldb\n", `flinkgo.yaml:1:21: state.backend.type: unknown state backend "leveldb"`},
		{"incremental not a bool", "state.backend.incremental: maybe\n", `state.backend.incremental: must be true or false, got "maybe"`},
		{"relative localdir", "state.backend.pebble.localdir: pebble\n", `state.backend.pebble.localdir: "pebble" is not an absolute local path`},
		{"s3 localdir", "state.backend.pebble.localdir: s3://b/p\n", "must be on a local disk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(home, "flinkgo.yaml"), []byte(tc.file), 0o600))
			c, err := Load(home, "", nil)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, api.BackendPebble, c.StateBackend)
				require.Equal(t, "/data/pebble", c.PebbleLocalDir)
				require.True(t, c.StateIncremental)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}
