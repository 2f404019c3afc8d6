package chaos

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The task failure suite fails a subtask of a keyed stage (test-fail after
// a keyBy, so its subtasks read from every source subtask and align
// barriers) in processing, in its snapshot, in its restore (Open after a
// restart), in notify-complete and in Close, at parallelism 1, 2 and 4,
// like Flink's UnalignedCheckpointITCase. The restart strategy recovers;
// the file sink's output must hold every record exactly once, and a keyed
// count fed by the same keyBy must end with exact counts (its output goes
// to an at-least-once collector, so only the highest count per key is
// checked).

const taskFailRecords = 4000

type taskFailCase struct {
	at    string // test-fail's at
	par   int
	times int // failures the test-fail operator injects
}

func (c taskFailCase) String() string { return fmt.Sprintf("at %s, parallelism %d", c.at, c.par) }

func (c taskFailCase) spec(name string) string {
	every := taskFailRecords / (8 * c.par) // records a subtask sees per attempt before it fails
	from := "fail"
	trigger := ""
	if c.at == "open" {
		// Open fails only on a restore: a failure in processing first.
		from = "trigger"
		trigger = fmt.Sprintf("\n  - {uid: trigger, type: test-fail, from: [fail], name: %s-trigger, every: %d, times: 1}", name, every)
	}
	return fmt.Sprintf(`
name: chaos-taskfail
parallelism: %d
checkpointing: {interval: 20ms}
restartStrategy: {type: fixed-delay, attempts: 30, delay: 5ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: 8000, format: checked}
  - {uid: key, type: keyBy, from: [gen], expr: "seq %% 16"}
  - {uid: fail, type: test-fail, from: [key], name: %s, every: %d, times: %d, at: %s}%s
  - {uid: out, type: file, from: [%s], path: %s, bucket: none, rolling: {maxPartSize: 2KiB}}
  - {uid: cnt, type: count, from: [key]}
  - {uid: counts, type: test-collect, from: [cnt], name: %s-counts, parallelism: 1}
`, c.par, taskFailRecords, name, every, c.times, c.at, trigger, from, outDir, name)
}

type taskFailOutcome struct {
	planned, fired int
	restarts       int
	report         *eocheck.Report
	err            error
}

func runTaskFail(c taskFailCase, name string) (o taskFailOutcome) {
	defer runtimetest.Reset(name + "-counts")
	mem := vfs.NewMem()
	j, err := job{spec: c.spec(name), fs: mem}.start()
	if err != nil {
		return taskFailOutcome{err: err}
	}
	timedOut := awaitEnd(j, 60*time.Second)
	o.planned, o.fired = c.times, int(runtimetest.Fired(name))
	if c.at == "open" {
		o.planned++
		o.fired += int(runtimetest.Fired(name + "-trigger"))
	}
	o.restarts = j.Info().Restarts
	if timedOut || j.State() != api.StateFinished {
		o.err = fmt.Errorf("job ended %s (timed out: %v): %s", j.State(), timedOut, j.Info().Error)
		return o
	}
	if o.restarts < 1 {
		o.err = fmt.Errorf("no restart")
	}
	if err := eocheck.Fired(o.planned, o.fired); err != nil {
		o.err = err
	}
	if o.report, err = checkOutput(mem, eocheck.Datagen(c.par, 1, taskFailRecords)); err != nil || !o.report.OK() {
		o.err = fmt.Errorf("file sink output: %v %v", err, o.report)
		return o
	}
	if err := checkCounts(runtimetest.Values(name + "-counts")); err != nil {
		o.err = err
	}
	return o
}

// checkCounts checks that the keyed count ends, for each key seq % 16,
// at the number of records with that key.
func checkCounts(values []string) error {
	final := map[string]int64{}
	for _, v := range values {
		var c struct {
			Key   string `json:"key"`
			Count int64  `json:"count"`
		}
		if err := json.Unmarshal([]byte(v), &c); err != nil {
			return fmt.Errorf("count output %q: %w", v, err)
		}
		final[c.Key] = max(final[c.Key], c.Count)
	}
	var bad []string
	for k := int64(0); k < 16; k++ {
		want := int64(0)
		for seq := int64(1); seq <= taskFailRecords; seq++ {
			if seq%16 == k {
				want++
			}
		}
		if got := final[fmt.Sprint(k)]; got != want {
			bad = append(bad, fmt.Sprintf("key %d: %d, want %d", k, got, want))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("keyed count not exactly once: %s", strings.Join(bad, "; "))
	}
	return nil
}

func TestTaskFailures(t *testing.T) {
	start := time.Now()
	pars := []int{1, 2, 4}
	if sweepSize() == sweepShort {
		pars = []int{2}
	}
	var cases []taskFailCase
	for _, at := range []struct {
		at    string
		times int
	}{{"process", 3}, {"snapshot", 3}, {"restore", 2}, {"notify", 3}, {"close", 1}} {
		for _, par := range pars {
			c := taskFailCase{at: at.at, par: par, times: at.times}
			if c.at == "restore" {
				c.at = "open"
			}
			cases = append(cases, c)
		}
	}
	base := fmt.Sprintf("chaos-taskfail-%d", time.Now().UnixNano())
	outs := make([]taskFailOutcome, len(cases))
	parallel(len(cases), 6, func(i int) { outs[i] = runTaskFail(cases[i], fmt.Sprintf("%s-%d", base, i)) })

	var sum tally
	var errs []string
	restarts := 0
	for i, o := range outs {
		sum.add(o.planned, o.fired, o.report)
		restarts += o.restarts
		if o.err != nil {
			errs = append(errs, fmt.Sprintf("failure %s: %v", cases[i], o.err))
		}
	}
	scorecard.Record(t, start, scorecard.Entry{Suite: "task failures (process, snapshot, restore, notify, close)",
		Faults:  fmt.Sprintf("test-fail in 5 places of a keyed stage x parallelism %s", strings.ReplaceAll(strings.Trim(fmt.Sprint(pars), "[]"), " ", ", ")),
		Planned: sum.planned, Fired: sum.fired, Cases: sum.cases, Records: sum.records, Lost: sum.lost, Duplicated: sum.dup})
	t.Logf("%d cases: %d of %d failures fired, %d restarts; %d records checked, lost %d, duplicated %d",
		sum.cases, sum.fired, sum.planned, restarts, sum.records, sum.lost, sum.dup)
	require.Empty(t, errs, strings.Join(errs, "\n"))
	require.NoError(t, eocheck.Fired(sum.planned, sum.fired))
}
