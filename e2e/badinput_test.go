package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// badSpecs are invalid job specs across the parser's categories. want holds
// "line:col: field" or other substrings the message must contain; the file
// name is checked separately.
var badSpecs = []struct {
	name, spec string
	want       []string
}{
	{"yaml syntax", "name: x\noperators: [\n  - {uid: a\n", []string{"3:5: YAML syntax error"}},
	{"empty file", "", []string{"1:1: the file is empty"}},
	{"unknown top-level key", "name: x\nparalelism: 2\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{`2:1: paralelism: unknown field "paralelism"; did you mean "parallelism"?`}},
	{"unknown operator option", "name: x\noperators:\n  - {uid: in, type: datagen, rat: 5}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{`3:30: operators[0].rat: unknown field "rat"; did you mean "rate"?`}},
	{"wrong type", "name: x\nparallelism: two\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{`2:14: parallelism: expected an integer, got "two"`}},
	{"duplicate uid", "name: x\noperators:\n  - {uid: in, type: datagen}\n  - {uid: in, type: print, from: [in]}\n",
		[]string{`4:11: operators[1].uid: duplicate uid "in"`}},
	{"dangling from", "name: x\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [nope]}\n",
		[]string{`4:36: operators[1].from[0]: no operator has uid "nope"`, `the output of "in" goes nowhere`}},
	{"cycle", "name: x\noperators:\n  - {uid: in, type: datagen}\n  - {uid: a, type: filter, from: [in, b], expr: \"true\"}\n  - {uid: b, type: filter, from: [a], expr: \"true\"}\n  - {uid: out, type: print, from: [b]}\n",
		[]string{"operators[2].from: cycle: a <- b <- a; a job must be a DAG"}},
	{"unknown operator type", "name: x\noperators:\n  - {uid: in, type: datagenn}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{`3:21: operators[0].type: unknown operator type "datagenn"; did you mean "datagen"?`}},
	{"bad duration", "name: x\ncheckpointing: {interval: 10 parsecs}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{`2:27: checkpointing.interval: "10 parsecs" has unknown unit "parsecs"`}},
	{"bad enum", "name: x\ncheckpointing: {interval: 1s, mode: twice}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{`2:37: checkpointing.mode: must be exactly-once or at-least-once, got "twice"`}},
	{"minPause with maxConcurrent > 1", "name: x\ncheckpointing: {interval: 1s, minPause: 5s, maxConcurrent: 2}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{"checkpointing.minPause: minPause 5s with maxConcurrent 2 is inconsistent"}},
	{"bad restart strategy", "name: x\nrestartStrategy: {type: fixed-delay, attempts: -1}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{"2:48: restartStrategy.attempts: must be 0 or more, got -1"}},
	{"parallelism over maxParallelism", "name: x\nmaxParallelism: 4\nparallelism: 8\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{"3:14: parallelism: 8 exceeds maxParallelism 4"}},
	{"bad expression", "name: x\noperators:\n  - {uid: in, type: datagen}\n  - {uid: f, type: filter, from: [in], expr: \"idx %% == 2\"}\n  - {uid: out, type: print, from: [f]}\n",
		[]string{`4:46: operators[1].expr: operator "f": cannot compile expression`}},
	{"uid that cannot name a file", "name: x\noperators:\n  - {uid: \"../in\", type: datagen}\n  - {uid: out, type: print, from: [\"../in\"]}\n",
		[]string{`3:11: operators[0].uid: "../in" is not a valid uid`}},
	{"kafka without brokers", "name: x\noperators:\n  - {uid: in, type: kafka, topic: t}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{`3:5: operators[0].brokers: missing required field "brokers"`}},
	{"kafka starting offsets", "name: x\noperators:\n  - {uid: in, type: kafka, brokers: [localhost:9092], topic: t, startingOffsets: yesterday}\n  - {uid: out, type: print, from: [in]}\n",
		[]string{"3:82: operators[0].startingOffsets: must be earliest, latest, committed"}},
	{"file sink without checkpointing", "name: x\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: file, from: [in], path: /tmp/never}\n",
		[]string{"4:5: operators[1]: the file sink makes part files visible only when a checkpoint completes"}},
	{"file sink without path", "name: x\ncheckpointing: {interval: 1s}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: file, from: [in]}\n",
		[]string{`5:5: operators[1].path: missing required field "path"`}},
	// One pass reports the graph's problems and every operator's
	// options, not one round each.
	{"option typo in a job without sink", "name: x\noperators:\n  - {uid: in, type: datagen, cuont: 10}\n",
		[]string{"operators: the job has no sink", `3:30: operators[0].cuont: unknown field "cuont"; did you mean "count"?`}},
	{"options beside a top-level typo and a dangling from", "name: x\ncheckpointng: {interval: 1s}\noperators:\n" +
		"  - {uid: in, type: kafka, brokers: [{host: localhost}], topic: t, format: xml}\n" +
		"  - {uid: gen, type: datagen, rate: fast, count: -5}\n" +
		"  - {uid: out, type: print, from: [in, gne]}\n",
		[]string{`2:1: checkpointng: unknown field "checkpointng"; did you mean "checkpointing"?`,
			`4:38: operators[0].brokers[0]: {"host":"localhost"} is not host:port`,
			`4:76: operators[0].format: must be one of json, raw, got "xml"`,
			`5:37: operators[1].rate: expected a number, got "fast"`,
			`5:50: operators[1].count: must be 0 or more, got -5`,
			`6:40: operators[2].from[1]: no operator has uid "gne"; did you mean "gen"?`}},
	{"relative file sink path", "name: x\ncheckpointing: {interval: 1s}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: file, from: [in], path: out}\n",
		[]string{`5:46: operators[1].path: "out" is a relative path: write it absolute`}},
	{"field the source's schema lacks", "name: x\noperators:\n  - {uid: in, type: datagen, count: 5, schema: {idx: int}}\n  - {uid: f, type: filter, from: [in], expr: \"idz > 1\"}\n  - {uid: out, type: print, from: [f]}\n",
		[]string{`4:46: operators[1].expr: operator "f": cannot compile expression "idz > 1": unknown field "idz"; did you mean "idx"?`}},
	{"filter that is not a condition", "name: x\noperators:\n  - {uid: in, type: datagen, count: 5}\n  - {uid: f, type: filter, from: [in], expr: \"idx + 1\"}\n  - {uid: out, type: print, from: [f]}\n",
		[]string{`4:46: operators[1].expr: operator "f": cannot compile expression "idx + 1": expression "idx + 1" gives the result of +`}},
	{"form instead of from", "name: x\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, form: [in]}\n",
		[]string{`4:29: operators[1].form: unknown field "form"; did you mean "from"?`}},
}

// Invalid job specs: `validate` and `run` exit 3 naming the file, line,
// column and field of every problem, the daemon's API refuses them too
// (422 with the details), and nothing starts.
func TestRefusesBadSpecs(t *testing.T) {
	parallel(t)
	start := time.Now()
	e := newEnv(t)
	e.startDaemon()
	jobs := e.mustRun("list", "-a", "-o", "json")
	refused := 0
	for _, c := range badSpecs {
		path := e.writeSpec(strings.ReplaceAll(c.name, " ", "_")+".yaml", c.spec)
		for _, cmd := range []string{"validate", "run"} {
			r := e.run(cmd, path)
			require.Equal(t, 3, r.code, "%s %s: %s%s", cmd, c.name, r.stdout, r.stderr)
			for _, w := range c.want {
				require.Contains(t, r.stderr, w, "%s %s", cmd, c.name)
				if positioned(w) {
					require.Contains(t, r.stderr, path+":"+w, "%s %s: the message names the file", cmd, c.name)
				}
			}
			require.Contains(t, r.stderr, path+":", "%s %s: the message names the file", cmd, c.name)
			requireNoPanic(t, "CLI output", r.stdout+r.stderr)
		}
		// The daemon validates on its own (a client may skip validate).
		body, err := json.Marshal(api.SubmitRequest{Spec: c.spec, File: "api.yaml"})
		require.NoError(t, err)
		code, resp := e.sockRequest(http.MethodPost, "/v1/jobs", body)
		require.Equal(t, http.StatusUnprocessableEntity, code, "%s: %s", c.name, resp)
		var wire struct {
			Error api.Error `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(resp), &wire), resp)
		require.Equal(t, api.CodeInvalid, wire.Error.Code)
		require.NotEmpty(t, wire.Error.Details, "%s: no details: %s", c.name, resp)
		for _, d := range wire.Error.Details {
			require.Equal(t, "api.yaml", d.File, "%s: %s", c.name, resp)
		}
		require.Contains(t, wire.Error.Message, "api.yaml:", c.name)
		require.Contains(t, wire.Error.Message, c.want[0], c.name)
		refused++
	}
	require.Equal(t, jobs, e.mustRun("list", "-a", "-o", "json"), "a job was created")
	require.NoDirExists(t, "/tmp/never")
	requireNoPanic(t, "daemon log", e.stderr.String())
	scorecard.Record(t, start, scorecard.Entry{Suite: "invalid job specs, real binary (validate, run, API)",
		Faults: "invalid specs: syntax, unknown keys, types, graph, durations, enums, connectors",
		Cases:  len(badSpecs), Planned: len(badSpecs), Fired: refused})
}

// positioned reports whether a wanted message starts with "line:col:".
func positioned(w string) bool {
	lc, _, ok := strings.Cut(w, ": ")
	line, col, ok2 := strings.Cut(lc, ":")
	return ok && ok2 && line != "" && col != "" && strings.Trim(line+col, "0123456789") == ""
}

// badConfigs are invalid daemon config files. want: substrings of the
// message, "line:col: key" first when the error has a position.
var badConfigs = []struct {
	name, conf string
	want       []string
}{
	{"unknown key", "state.checkpoints.dir: /tmp/x\nstate.savepoint.dir: /tmp/y\n",
		[]string{`2:1: state.savepoint.dir: unknown configuration key "state.savepoint.dir"; did you mean "state.savepoints.dir"?`}},
	{"unknown nested key", "state:\n  checkpoints:\n    dir: /tmp/x\n  savepoints:\n    dirr: /tmp/y\n",
		[]string{`5:5: state.savepoints.dirr: unknown configuration key`}},
	{"bad duration", "execution.checkpointing.interval: 10 parsecs\n",
		[]string{`1:35: execution.checkpointing.interval: "10 parsecs" has unknown unit "parsecs"`}},
	{"bad enum", "execution.checkpointing.mode: TWICE\n",
		[]string{`1:31: execution.checkpointing.mode: must be EXACTLY_ONCE or AT_LEAST_ONCE, got "TWICE"`}},
	{"bad log level", "log.level: loud\n", []string{`1:12: log.level: must be debug, info, warn or error, got "loud"`}},
	{"bad integer", "execution.checkpointing.num-retained: many\n",
		[]string{`1:39: execution.checkpointing.num-retained: must be an integer, got "many"`}},
	{"bad restart type", "restart-strategy.type: sometimes\n", []string{`1:24: restart-strategy.type: must be none, fixed-delay`}},
	{"relative allowed path", "security.allowed-paths: /ok,relative/dir\n",
		[]string{`1:25: security.allowed-paths: "relative/dir" is not an absolute path`}},
	{"list value", "state.checkpoints.dir: [/a, /b]\n", []string{"1:24: state.checkpoints.dir: expected a single value, not a list"}},
	{"yaml syntax", "state.checkpoints.dir: /a\n  bad: : :\n", []string{"2:8: YAML syntax error"}},
	{"not a mapping", "- a\n- b\n", []string{"1:1: the config file must be a mapping of keys to values"}},
	// Cross-field checks name both keys, at the line of the first.
	{"minPause with maxConcurrent > 1", "execution.checkpointing.interval: 1s\nexecution.checkpointing.min-pause: 5s\nexecution.checkpointing.max-concurrent-checkpoints: 2\n",
		[]string{"2:36: execution.checkpointing.min-pause: execution.checkpointing.min-pause 5s with execution.checkpointing.max-concurrent-checkpoints 2 is inconsistent"}},
	{"negative restart attempts", "restart-strategy.type: fixed-delay\nrestart-strategy.fixed-delay.attempts: -3\n",
		[]string{"restart-strategy.fixed-delay.attempts: must be 0 or more, got -3"}},
}

// runFor runs the binary with a deadline (a daemon that wrongly starts
// would otherwise run forever) in the environment of e.
func (e *env) runFor(timeout time.Duration, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.binary(), args...)
	cmd.Env = e.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(e.t, ctx.Err(), "flinkgo %v still running after %s: %s", args, timeout, errb.String())
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(e.t, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// Invalid daemon config files: `flinkgo daemon --config` exits 3 naming the
// file, line and key; the daemon does not start and writes nothing into its
// home (no socket, token or lock).
func TestRefusesBadConfigs(t *testing.T) {
	parallel(t)
	start := time.Now()
	refused := 0
	confDir := t.TempDir()
	for _, c := range badConfigs {
		e := newEnv(t)
		home := filepath.Join(e.home, "home") // does not exist yet
		e.home = home
		conf := filepath.Join(confDir, strings.ReplaceAll(c.name, " ", "_")+".yaml")
		require.NoError(t, os.WriteFile(conf, []byte(c.conf), 0o600))
		r := e.runFor(20*time.Second, "daemon", "--config", conf, "--rest-address", "127.0.0.1:0")
		require.Equal(t, 3, r.code, "%s: %s%s", c.name, r.stdout, r.stderr)
		require.Contains(t, r.stderr, conf, "%s: the message names the file", c.name)
		for _, w := range c.want {
			require.Contains(t, r.stderr, w, c.name)
			if positioned(w) {
				require.Contains(t, r.stderr, conf+":"+w, c.name)
			}
		}
		requireNoPanic(t, "daemon output", r.stdout+r.stderr)
		require.NoDirExists(t, home, "%s: the refused daemon created its home", c.name)

		// The same file as the home's flinkgo.yaml, found without --config.
		require.NoError(t, os.MkdirAll(home, 0o700))
		implicit := filepath.Join(home, "flinkgo.yaml")
		require.NoError(t, os.WriteFile(implicit, []byte(c.conf), 0o600))
		r = e.runFor(20*time.Second, "daemon", "--rest-address", "127.0.0.1:0")
		require.Equal(t, 3, r.code, "%s (implicit): %s%s", c.name, r.stdout, r.stderr)
		require.Contains(t, r.stderr, implicit, c.name)
		entries, err := os.ReadDir(home)
		require.NoError(t, err)
		require.Len(t, entries, 1, "%s: the refused daemon wrote into its home", c.name)
		refused++
	}
	// An environment variable is named as the source of a bad value.
	e := newEnv(t)
	e.extra = []string{"FLINKGO_EXECUTION_CHECKPOINTING_INTERVAL=soon"}
	r := e.runFor(20*time.Second, "daemon", "--rest-address", "127.0.0.1:0")
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stderr, "from environment variable FLINKGO_EXECUTION_CHECKPOINTING_INTERVAL")
	require.NoFileExists(t, filepath.Join(e.home, "flinkgo.sock"))
	// A --config that does not exist is an error, not the defaults.
	r = e.runFor(20*time.Second, "daemon", "--config", filepath.Join(confDir, "missing.yaml"))
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stderr, "missing.yaml")
	require.NoFileExists(t, filepath.Join(e.home, "flinkgo.sock"))
	scorecard.Record(t, start, scorecard.Entry{Suite: "invalid daemon configs, real binary",
		Faults: "unknown keys, bad durations/enums/ints, inconsistent checkpointing, YAML errors, bad env",
		Cases:  len(badConfigs) + 2, Planned: len(badConfigs), Fired: refused})
}

// Cross-field config errors should name the config key as written in the
// file, with its line, like every other config error. Today they name the
// job-spec field ("execution.checkpointing.minPause", not a config key)
// and no line; "restart-strategy.fixed-delay.attempts: must be 0 or more"
// has no line either.
func TestConfigCrossFieldErrorsNameTheKeyAndLine(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	conf := filepath.Join(t.TempDir(), "flinkgo.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("execution.checkpointing.interval: 1s\nexecution.checkpointing.min-pause: 5s\nexecution.checkpointing.max-concurrent-checkpoints: 2\n"), 0o600))
	r := e.runFor(20*time.Second, "daemon", "--config", conf)
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stderr, conf+":2:")
	require.Contains(t, r.stderr, "execution.checkpointing.min-pause")
	require.NotContains(t, r.stderr, "minPause")
}
