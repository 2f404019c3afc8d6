package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flinkgo/flinkgo/pkg/api"
)

func TestResolveStateBackend(t *testing.T) {
	for _, tc := range []struct {
		job    *api.StateBackendSpec
		daemon string
		want   string
	}{
		{nil, "", api.BackendHashMap},
		{nil, api.BackendPebble, api.BackendPebble},
		{&api.StateBackendSpec{}, api.BackendPebble, api.BackendPebble},
		{&api.StateBackendSpec{Type: api.BackendHashMap}, api.BackendPebble, api.BackendHashMap},
		{&api.StateBackendSpec{Type: api.BackendPebble}, "", api.BackendPebble},
	} {
		assert.Equal(t, tc.want, resolveStateBackend(tc.job, tc.daemon))
	}
}

func TestPebbleUnsupportedNamesTheWayOut(t *testing.T) {
	msg := pebbleUnsupported("window", []string{"count", "reduce"})
	assert.Contains(t, msg, `"window"`)
	assert.Contains(t, msg, "count, reduce")
	assert.Contains(t, msg, "stateBackend: {type: hashmap}")
}
