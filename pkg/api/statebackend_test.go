package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStateBackendType(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"hashmap", BackendHashMap, ""},
		{"HASHMAP", BackendHashMap, ""},
		{" heap ", BackendHashMap, ""},
		{"pebble", BackendPebble, ""},
		{"Pebble", BackendPebble, ""},
		{"rocksdb", "", "flinkgo's on-disk state backend is pebble"},
		{"ROCKSDB", "", "write type: pebble"},
		{"", "", `unknown state backend ""`},
		{"leveldb", "", "use hashmap (state in memory, the default) or pebble"},
	} {
		got, err := StateBackendType(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestIncrementalOnPebbleOnly(t *testing.T) {
	on := true
	for typ, want := range map[string]string{"pebble": "", "": "", "heap": "incremental checkpoints are pebble's"} {
		d := NewDecoder("job.yaml")
		validateStateBackendSpec(d, "stateBackend", &StateBackendSpec{Type: typ, Incremental: &on})
		if want == "" {
			require.NoError(t, d.Errors.Err(), typ)
			continue
		}
		require.ErrorContains(t, d.Errors.Err(), want, typ)
	}
}

func TestValidateStateBackendSpecNormalizes(t *testing.T) {
	d := NewDecoder("job.yaml")
	off := false
	s := &StateBackendSpec{Type: "PEBBLE", Incremental: &off}
	validateStateBackendSpec(d, "stateBackend", s)
	require.NoError(t, d.Errors.Err())
	assert.Equal(t, BackendPebble, s.Type)
}
