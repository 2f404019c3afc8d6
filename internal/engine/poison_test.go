package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// poisonSpec: record idx 50 fails the filter (a string has no field x),
// every other passes. checkpointing lets checkpoints complete between the
// failures, so the restarts restore other checkpoints than the first run.
func poisonSpec(name, onError, extra string) string {
	return fmt.Sprintf(`
name: poison
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 10ms}
operators:
  - {uid: in, type: datagen, count: 100, rate: 2000}
  - {uid: f, type: filter, from: [in], expr: "idx != 50 || value.x == 1"%s}
  - {uid: out, type: test-collect, from: [f], name: %s}
%s`, onError, name, extra)
}

// A record that fails the same way after the restart is poison: the job is
// FAILED naming it after its second failure, not restarted by its
// strategy (100 attempts here; unlimited by default with checkpointing).
func TestPoisonRecordFailsTheJob(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, poisonSpec(name, "", ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, 20*time.Second))
	info := j.Info()
	assert.Equal(t, 1, info.Restarts, "one restart, and the same record failed again")
	assert.Contains(t, info.Error, "operator f failed on the same record again after a restart")
	assert.Regexp(t, `record \d+ of subtask 0 (since the start|after checkpoint \d+) \(value "\{\\"idx\\": 50\}"\)`, info.Error)
	assert.Contains(t, info.Error, "set onError: skip or sideOutput on f")
}

// onError: skip goes past the record, counts it and shows it in info.
func TestOnErrorSkip(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, poisonSpec(name, ", onError: skip", ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	assert.Len(t, runtimetest.Values(name), 99)
	assert.NotContains(t, runtimetest.Values(name), `{"idx": 50}`)
	info := j.Info()
	assert.Zero(t, info.Restarts)
	assert.Equal(t, int64(1), info.Operators[1].Metrics[runtime.MetricErrorsSkipped])
}

// onError: sideOutput sends the record with its error to <uid>.errors.
func TestOnErrorSideOutput(t *testing.T) {
	name, dead := runtimetest.UniqueName(t), runtimetest.UniqueName(t)
	j := runtimetest.Start(t, poisonSpec(name, ", onError: sideOutput", fmt.Sprintf("  - {uid: dead, type: test-collect, from: [f.errors], name: %s}\n", dead)),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	assert.Len(t, runtimetest.Values(name), 99)
	letters := runtimetest.Values(dead)
	require.Len(t, letters, 1)
	assert.Regexp(t, `^\{"error":"expression .*","operator":"f","subtask":0,"position":"50 of subtask 0 since the start","record":\{"idx":50\}\}$`, letters[0])
	assert.Equal(t, int64(1), j.Info().Operators[1].Metrics[runtime.MetricErrorsToSideOutput])
}

// A record error in a keyed process function (a window aggregate) follows
// onError as well.
func TestOnErrorInWindow(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: window-errors
operators:
  - {uid: in, type: datagen, count: 100}
  - {uid: m, type: map, from: [in], expr: 'idx == 7 ? {"k": 1, "n": "seven"} : {"k": 1, "n": idx}'}
  - {uid: keys, type: keyBy, from: [m], expr: "k"}
  - {uid: w, type: window, from: [keys], window: {type: tumbling, size: 1h}, time: processing, aggregate: {total: "sum(n)"}, onError: skip}
  - {uid: out, type: test-collect, from: [w], name: %s}
`, name), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	vals := runtimetest.Values(name)
	require.Len(t, vals, 1)
	assert.Contains(t, vals[0], fmt.Sprintf(`"total":%d`, 100*101/2-7))
	assert.Equal(t, int64(1), j.Info().Operators[3].Metrics[runtime.MetricErrorsSkipped])
}

func TestOnErrorRefusedWhereItCannotApply(t *testing.T) {
	for src, want := range map[string]string{
		"  - {uid: in, type: datagen, onError: skip}\n  - {uid: out, type: print, from: [in]}\n":                                                                                       `operators[0].onError: does not apply to "in" (type datagen)`,
		"  - {uid: in, type: datagen}\n  - {uid: f, type: filter, from: [in], expr: 'true', onError: sideOutput}\n  - {uid: out, type: print, from: [f]}\n":                            `no operator reads it: add one with from: [f.errors]`,
		"  - {uid: in, type: datagen}\n  - {uid: f, type: filter, from: [in], expr: 'true'}\n  - {uid: out, type: print, from: [f]}\n  - {uid: dead, type: print, from: [f.errors]}\n": `has no side output "errors"; set onError: sideOutput on it`,
		"  - {uid: in, type: datagen}\n  - {uid: f, type: filter, from: [in], expr: 'true', onError: ignore}\n  - {uid: out, type: print, from: [f]}\n":                                `operators[1].onError: must be fail, skip or sideOutput, got "ignore"`,
	} {
		_, err := compileSpec("name: x\noperators:\n" + src)
		if assert.Error(t, err, src) {
			assert.Contains(t, err.Error(), want, src)
			assert.Equal(t, 1, strings.Count(err.Error(), "\n")+1, "one problem: %v", err)
		}
	}
}

func compileSpec(spec string) (*engine.Graph, error) {
	return engine.Compile(testRegistry, "test.yaml", []byte(spec), engine.Defaults{})
}
