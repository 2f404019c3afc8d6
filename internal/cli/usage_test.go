package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

// result is what a user sees of one command line: stdout, stderr (with the
// error as main writes it) and the exit code.
type result struct {
	stdout, stderr string
	code           int
}

// run runs the command line in process as main does (pkg/flinkgo.Run):
// the error written by WriteError, the exit code by ExitCode. A command
// still running after a minute (a server that a bad flag should have
// stopped) is cancelled, as Ctrl-C would.
func run(t *testing.T, args ...string) result {
	t.Helper()
	root := NewRoot(all.Registry())
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	require.NoError(t, ctx.Err(), "flinkgo %v ran for a minute", args)
	if err != nil {
		WriteError(root, &errOut, err)
	}
	return result{out.String(), errOut.String(), ExitCode(err)}
}

// Every command refuses a wrong number of arguments, an unknown flag or a
// bad flag value before it does anything (no daemon is running here, and
// none is asked): exit 2, a message naming what to give, nothing on stdout.
func TestUsageErrors(t *testing.T) {
	t.Setenv("FLINKGO_HOME", t.TempDir())
	t.Setenv("FLINKGO_ADDRESS", filepath.Join(t.TempDir(), "no-daemon.sock"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cancel"}, "usage: flinkgo cancel JOB"},
		{[]string{"cancel", "a", "b"}, "usage: flinkgo cancel JOB"},
		{[]string{"info"}, "usage: flinkgo info JOB"},
		{[]string{"checkpoints"}, "usage: flinkgo checkpoints JOB"},
		{[]string{"stop"}, "usage: flinkgo stop JOB [flags]"},
		{[]string{"logs", "a", "b"}, "usage: flinkgo logs JOB [flags]"},
		{[]string{"logs", "-n", "0", "a"}, "-n 0: give a number of lines from 1 to 1000"},
		{[]string{"list", "extra"}, "usage: flinkgo list [flags]"},
		{[]string{"version", "extra"}, "usage: flinkgo version"},
		{[]string{"ui", "extra"}, "usage: flinkgo ui [flags]"},
		{[]string{"daemon", "extra"}, "usage: flinkgo daemon [flags]"},
		{[]string{"daemon", "drain", "extra"}, "usage: flinkgo daemon drain"},
		{[]string{"savepoint"}, "usage: flinkgo savepoint JOB [TARGET_DIR] [flags]"},
		{[]string{"savepoint", "a", "b", "c"}, "usage: flinkgo savepoint JOB [TARGET_DIR] [flags]"},
		{[]string{"savepoint", "-d", "/x", "a"}, "usage: flinkgo savepoint JOB [TARGET_DIR] [flags]"},
		{[]string{"savepoint", "inspect"}, "usage: flinkgo savepoint inspect PATH"},
		{[]string{"savepoint", "dispose"}, "usage: flinkgo savepoint dispose PATH [flags]"},
		{[]string{"run"}, "usage: flinkgo run [-s SAVEPOINT] JOB.yaml [flags]"},
		{[]string{"run", "a.yaml", "b.yaml"}, "usage: flinkgo run [-s SAVEPOINT] JOB.yaml [flags]"},
		{[]string{"run", "-s", "/sp"}, "run -s /sp needs the job's spec file too: flinkgo run -s /sp JOB.yaml"},
		{[]string{"validate"}, "usage: flinkgo validate JOB.yaml... [flags]"},
		{[]string{"dev", "kafka", "topics", "create"}, "usage: flinkgo dev kafka topics create NAME[:PARTITIONS]... [flags]"},
		{[]string{"dev", "kafka", "topics", "create", "clicks:x"}, `topic "clicks:x": partitions "x" is not a number (want name or name:partitions, e.g. flink-test:4)`},
		{[]string{"dev", "kafka", "--listen", "127.0.0.1:0", "--topic", "t:0"}, `--topic: topic "t:0": partitions must be at least 1, got 0`},
		{[]string{"dev", "nats", "--listen", "127.0.0.1:0", "--stream", "bad.name:x"}, `--stream: stream "bad.name:x": stream name "bad.name" must not contain '.'`},
		{[]string{"dev", "verify"}, "give --path (a file sink's directory) or --kafka TOPIC, one of them"},
		{[]string{"dev", "verify", "--path", "/x", "--kafka", "t"}, "give --path (a file sink's directory) or --kafka TOPIC, one of them"},
		{[]string{"dev", "verify", "--kafka", "t", "--job", "j"}, "--job goes with --path: a Kafka topic names no job"},
		{[]string{"dev", "consume", "--count", "-1"}, "--count must be 0 (no limit) or more, got -1"},
		{[]string{"dev", "consume", "--isolation", "dirty"}, `--isolation must be read_committed or read_uncommitted, got "dirty"`},
		{[]string{"dev", "consume", "--nats", "nats://127.0.0.1:1", "--topic", "t"}, "--nats reads a NATS subject (--subject); --brokers, --topic and --isolation are for Kafka"},
		{[]string{"dev", "produce", "--nats", "nats://127.0.0.1:1", "--brokers", "b:1"}, "--nats writes to a NATS subject (--subject); --brokers and --topic are for Kafka"},
		{[]string{"dev", "produce", "--keys", "3"}, "--keys is an option of --events"},
		{[]string{"dev", "produce", "--events", "--out-of-orderness", "-1s"}, "--out-of-orderness: must be 0 or more, got -1s"},
		{[]string{"dev", "produce", "--expr", "idx +"}, `bad expression: --expr "idx +"`},
		{[]string{"chaos"}, "usage: flinkgo chaos JOB.yaml --kills N"},
		{[]string{"chaos", "job.yaml"}, "no faults: give --kills N (and/or --stop-restore M), for example --kills 5"},
		{[]string{"chaos", "--kills", "-1", "job.yaml"}, "--kills and --stop-restore count faults: give 0 or more"},
		{[]string{"list", "-o", "yaml"}, `-o must be text or json, got "yaml"`},
		{[]string{"list", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"stop", "--timeout", "soon", "a"}, `invalid argument "soon" for "--timeout" flag`},
		{[]string{"nosuchcommand"}, `unknown command "nosuchcommand" for "flinkgo"`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := run(t, c.args...)
			assert.Equal(t, 2, r.code, "exit code; stderr: %s", r.stderr)
			assert.True(t, strings.HasPrefix(r.stderr, "error: "), "stderr: %q", r.stderr)
			assert.Contains(t, r.stderr, c.want)
			assert.Empty(t, r.stdout)
		})
	}
}

// With -o json a usage error is the control API's error object with the
// exit code, on stderr; so is a spec that does not exist (exit 4). (-o
// must come before an unknown flag: flag parsing stops there.)
func TestErrorsAsJSON(t *testing.T) {
	t.Setenv("FLINKGO_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		code string
		exit int
		msg  string
	}{
		{[]string{"cancel", "-o", "json"}, "usage", 2, "usage: flinkgo cancel JOB"},
		{[]string{"list", "-o", "json", "--bogus"}, "usage", 2, "unknown flag: --bogus"},
		{[]string{"validate", "-o", "json", "/nonexistent/job.yaml"}, "not_found", 4, "job spec /nonexistent/job.yaml does not exist"},
	} {
		r := run(t, c.args...)
		require.Equal(t, c.exit, r.code, r.stderr)
		var got struct {
			Error struct {
				Code, Message string
			}
			ExitCode int
		}
		require.NoError(t, json.Unmarshal([]byte(r.stderr), &got), "stderr is one JSON object: %s", r.stderr)
		assert.Equal(t, c.code, got.Error.Code, c.args)
		assert.Contains(t, got.Error.Message, c.msg, c.args)
		assert.Equal(t, c.exit, got.ExitCode, c.args)
	}
}

// No daemon at the address: exit 5 (unavailable) with the address in the
// message, for every command that needs one.
func TestNoDaemonIsUnavailable(t *testing.T) {
	t.Setenv("FLINKGO_HOME", t.TempDir())
	sock := filepath.Join(t.TempDir(), "flinkgo.sock")
	for _, args := range [][]string{{"list"}, {"info", "j"}, {"cancel", "j"}, {"checkpoints", "j"}, {"logs", "j"},
		{"savepoint", "j"}, {"stop", "j"}, {"ui", "--no-browser"}, {"daemon", "drain"}} {
		r := run(t, append(args, "--address", sock)...)
		assert.Equal(t, 5, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "cannot reach the flinkgo daemon at "+sock, args)
		assert.Contains(t, r.stderr, "start one with `flinkgo daemon`", args)
		assert.Empty(t, r.stdout, args)
	}
}

// validate: each valid file on a line of its own; exit 3 with every
// problem of every invalid file, each naming its file and line; -o json
// gives a verdict per file and the errors ([] when valid); --types lists
// the operator types.
func TestValidateOutput(t *testing.T) {
	t.Setenv("FLINKGO_HOME", t.TempDir())
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	good := write("good.yaml", "name: good\noperators:\n  - {uid: gen, type: datagen, count: 10}\n  - {uid: out, type: discard, from: [gen]}\n")
	bad := write("bad.yaml", "name: bad\noperators:\n  - {uid: gen, type: datagen, count: -1}\n  - {uid: out, type: discard, from: [nowhere]}\n")

	r := run(t, "validate", good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, good+": valid\n", r.stdout)

	r = run(t, "validate", good, bad)
	require.Equal(t, 3, r.code)
	require.Equal(t, good+": valid\n", r.stdout, "the valid file is still reported")
	require.Contains(t, r.stderr, bad+`:3:38: operators[0].count: must be 0 or more, got -1`)
	require.Contains(t, r.stderr, bad+`:4:38: operators[1].from[0]: no operator has uid "nowhere"`)

	r = run(t, "validate", "-o", "json", good, bad)
	require.Equal(t, 3, r.code)
	var verdict struct {
		Files  map[string]string
		Errors []struct {
			File, Field string
			Pos         struct{ Line int }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &verdict), r.stdout)
	require.Equal(t, map[string]string{good: "valid", bad: "invalid"}, verdict.Files)
	var where []string
	for _, e := range verdict.Errors {
		require.Equal(t, bad, e.File)
		where = append(where, fmt.Sprintf("%d %s", e.Pos.Line, e.Field))
	}
	require.Equal(t, []string{"3 operators[0]", "3 operators[0].count", "4 operators[1].from[0]"}, where)
	r = run(t, "validate", "-o", "json", good)
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, `"errors": []`)

	r = run(t, "validate", "--types")
	require.Equal(t, 0, r.code)
	require.Regexp(t, `(?m)^datagen +source +\S`, r.stdout)
	require.Regexp(t, `(?m)^file +sink +\S`, r.stdout)
	r = run(t, "validate", "--types", "-o", "json")
	var types []map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &types))
	require.Contains(t, types, map[string]string{"type": "datagen", "kind": "source", "doc": types[indexOf(types, "datagen")]["doc"]})
}

func indexOf(types []map[string]string, typ string) int {
	for i, d := range types {
		if d["type"] == typ {
			return i
		}
	}
	return -1
}

// version says the binary's version, its Go and its snapshot format.
func TestVersionOutput(t *testing.T) {
	r := run(t, "version")
	require.Equal(t, 0, r.code)
	require.Regexp(t, `^flinkgo \S+ \(go\S+, snapshot format \d+\)\n$`, r.stdout)
	r = run(t, "version", "-o", "json")
	var v struct {
		Version, Go    string
		MetadataFormat int
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	require.NotEmpty(t, v.Version)
	require.True(t, strings.HasPrefix(v.Go, "go"), v.Go)
	require.Positive(t, v.MetadataFormat)
}
