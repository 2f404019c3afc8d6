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

// joinSpec: a left interval join whose select fails on every unmatched
// left row (right is null), which it emits when its timer fires: no right
// row shares a key with a left row.
func joinSpec(name, onError, extra string) string {
	return fmt.Sprintf(`
name: join-errors
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 100, delay: 10ms}
operators:
  - {uid: l, type: datagen, format: events, count: 40, rate: 2000, keys: 4, step: 10ms, eventTime: {maxOutOfOrderness: 0s}}
  - {uid: r, type: datagen, format: events, count: 40, rate: 2000, keys: 4, keyPrefix: v, step: 10ms, eventTime: {maxOutOfOrderness: 0s}}
  - uid: j
    type: intervalJoin
    left: {from: l, key: user}
    right: {from: r, key: user}
    lower: 0s
    upper: 20ms
    how: left
    select: {d: "right.amount - left.amount"}%s
  - {uid: out, type: test-collect, from: [j], name: %s}
%s`, onError, name, extra)
}

// An error raised while a timer fires (here a join's select over an
// unmatched row, emitted by its expiry timer) is a record failure: the
// same one after the restart is poison, and the job is FAILED naming the
// timer, not restarted forever.
func TestPoisonTimerFailsTheJob(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, joinSpec(name, "", ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, 20*time.Second))
	info := j.Info()
	assert.Equal(t, 1, info.Restarts, "one restart, and the same timer failed again")
	assert.Contains(t, info.Error, "operator j failed on the same record again after a restart")
	assert.Regexp(t, `event-time timer at \d+ of key "u\d", the result of key "u\d" at \d+ in subtask 0 (since the start|after checkpoint \d+) \(value "\{\\"left\\":\{.*\},\\"right\\":null\}"\): select d: .*invalid operation`, info.Error)
	assert.Contains(t, info.Error, "set onError: skip or sideOutput on j")
}

// A join takes onError: skip counts the results it cannot build and goes
// on; sideOutput sends them, with both rows, to j.errors.
func TestOnErrorInJoin(t *testing.T) {
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, joinSpec(name, "\n    onError: skip", ""), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	assert.Empty(t, runtimetest.Values(name))
	assert.Equal(t, int64(40), j.Info().Operators[2].Metrics[runtime.MetricErrorsSkipped])

	name, dead := runtimetest.UniqueName(t)+"-side", runtimetest.UniqueName(t)+"-dead"
	j = runtimetest.Start(t, joinSpec(name, "\n    onError: sideOutput", fmt.Sprintf("  - {uid: dead, type: test-collect, from: [j.errors], name: %s}\n", dead)),
		runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	letters := runtimetest.Values(dead)
	require.Len(t, letters, 40)
	assert.Regexp(t, `^\{"error":"select d: .*","operator":"j","subtask":0,"position":"the result of key \\"u\d\\" at \d+ in subtask 0 since the start","record":\{"left":\{.*"amount":\d+.*\},"right":null\}\}$`, letters[0])
}
