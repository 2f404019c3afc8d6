package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Durations are milliseconds in fields ending in Ms on the wire; reading
// also takes the nanoseconds of registries written before.
func TestDurationsOnTheWireAreMilliseconds(t *testing.T) {
	info := JobInfo{Checkpointing: CheckpointConfig{Interval: 2 * time.Second, Timeout: 10 * time.Minute, Mode: ExactlyOnce},
		RestartStrategy: RestartConfig{Type: RestartFixedDelay, Attempts: 3, Delay: 1500 * time.Millisecond}}
	b, err := json.Marshal(info)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	cp := m["checkpointing"].(map[string]any)
	assert.Equal(t, 2000.0, cp["intervalMs"])
	assert.Equal(t, 600000.0, cp["timeoutMs"])
	assert.Equal(t, 0.0, cp["minPauseMs"])
	assert.NotContains(t, cp, "interval")
	rs := m["restartStrategy"].(map[string]any)
	assert.Equal(t, 1500.0, rs["delayMs"])
	assert.NotContains(t, rs, "delay")

	var back JobInfo
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, info.Checkpointing, back.Checkpointing)
	assert.Equal(t, info.RestartStrategy, back.RestartStrategy)

	var legacy JobInfo
	require.NoError(t, json.Unmarshal([]byte(`{"checkpointing": {"interval": 1000000000, "timeout": 600000000000, "minPause": 0},
		"restartStrategy": {"type": "fixed-delay", "attempts": 1, "delay": 1000000000}}`), &legacy))
	assert.Equal(t, time.Second, legacy.Checkpointing.Interval)
	assert.Equal(t, 10*time.Minute, legacy.Checkpointing.Timeout)
	assert.Equal(t, time.Second, legacy.RestartStrategy.Delay)
}
