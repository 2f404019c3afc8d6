package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/flinkgo/flinkgotest"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The users that stop early alert while the stream goes on, 5 minutes of
// event time after their last click; the rest alert at the end of input.
func TestQuietUsersAlert(t *testing.T) {
	name := flinkgotest.UniqueName(t)
	j := flinkgotest.Start(t, `
name: inactivity-alert
watermarkInterval: 1ms
operators:
  - uid: clicks
    type: datagen
    format: events
    count: 100000
    keys: 50
    step: 100ms
    outOfOrderness: 1s
    eventTime: {maxOutOfOrderness: 1s}
  - {uid: someStop, type: filter, from: [clicks], expr: 'idx < 20000 || !(user in ["u0", "u10", "u20", "u30", "u40"])'}
  - {uid: byUser, type: keyBy, from: [someStop], expr: user}
  - {uid: quiet, type: inactivity-alert, from: [byUser], quiet: 5m}
  - {uid: out, type: test-collect, from: [quiet], name: `+name+`}
`, flinkgotest.Options{Types: []runtime.Definition{alertDefinition()}})
	require.Equal(t, api.StateFinished, j.Wait(t, time.Minute), j.Info().Error)
	vals := flinkgotest.Collected(name)
	require.Len(t, vals, 50, "one alert per user")
	early := map[string]bool{"u0": true, "u10": true, "u20": true, "u30": true, "u40": true}
	for i, v := range vals {
		var a struct {
			Key               string
			LastSeen, AlertAt int64
		}
		require.NoError(t, json.Unmarshal([]byte(v), &a), v)
		require.Equal(t, a.LastSeen+5*60*1000, a.AlertAt, v)
		if i < len(early) {
			require.True(t, early[a.Key], "the users that stopped alert first, during the stream: %s", v)
		} else {
			require.False(t, early[a.Key], v)
		}
	}
}

// The tests of job.yaml (job_test.yaml), with this binary's operator type:
// what `flinkgo-alert test examples/inactivity-alert/job.yaml` runs.
func TestJobSpec(t *testing.T) {
	flinkgotest.RunSpecTests(t, "job.yaml", flinkgotest.SpecTestOptions{Types: []runtime.Definition{alertDefinition()}})
}
