package spectest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/spectest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Every test's job ends with its test: nothing is left running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var registry = runtime.MustRegistry(all.Definitions()...)

// load reads a spec and its tests from strings, failing the test when they
// are refused.
func load(t *testing.T, spec, tests string) *spectest.Suite {
	t.Helper()
	s, err := spectest.Load(registry, engine.Defaults{}, "job.yaml", []byte(spec), "job_test.yaml", []byte(tests))
	require.NoError(t, err)
	return s
}

// run runs every test of s and returns the results by name.
func run(t *testing.T, s *spectest.Suite) map[string]spectest.Result {
	t.Helper()
	out := map[string]spectest.Result{}
	for _, r := range s.Run(context.Background(), spectest.Options{}) {
		out[r.Name] = r
	}
	require.Len(t, out, len(s.Tests))
	return out
}

// The example: a tumbling count per key by event time.
const windowSpec = `
name: counts
operators:
  - uid: src
    type: kafka
    brokers: [localhost:9092]
    topic: in
    format: json
    eventTime: {maxOutOfOrderness: 2s}
  - {uid: byIdx, type: keyBy, from: [src], expr: string(idx % 2)}
  - uid: counts
    type: window
    from: [byIdx]
    parallelism: 2
    window: {type: tumbling, size: 10s}
    aggregate: {n: count()}
  - {uid: out, type: print, from: [counts]}
  - {uid: late, type: print, from: [counts.late]}
`

func TestWindowedJobPassesAndFailsWithADiff(t *testing.T) {
	s := load(t, windowSpec, `
tests:
  - name: two keys in one window
    inputs:
      src:
        - {value: {idx: 2}, timestamp: 1767225600000}
        - {value: {idx: 3}, key: "k", timestamp: 1767225602000}
    expect:
      out:
        - {key: "0", windowStart: 1767225600000, windowEnd: 1767225610000, n: 1}
        - {key: "1", windowStart: 1767225600000, windowEnd: 1767225610000, n: 1}
      late: []
  - name: wrong
    inputs:
      src:
        - {value: {idx: 2}, timestamp: 1767225600000}
        - {value: {idx: 4}, timestamp: 1767225601000}
        - {value: {idx: 3}, timestamp: 1767225602000}
        - {value: {idx: 5}, timestamp: 1767225615000}
        - {value: {idx: 7}, timestamp: 1767225603000}
    expect:
      out:
        - {key: "0", windowStart: 1767225600000, windowEnd: 1767225610000, n: 1}
        - {key: "1", windowStart: 1767225600000, windowEnd: 1767225610000, n: 1}
        - {key: "3", windowStart: 1767225600000, windowEnd: 1767225610000, n: 1}
      late: {count: 0}
`)
	res := run(t, s)
	pass := res["two keys in one window"]
	assert.True(t, pass.Passed, spectest.Explain(pass, ""))
	assert.Equal(t, 3, pass.Line)

	fail := res["wrong"]
	require.False(t, fail.Passed)
	// idx 7 at :03 comes after :15 moved the watermark (bound 2 s) past the
	// first window's end: it is late, and the window counted 2 for key 0.
	assert.Equal(t, `job_test.yaml:22: sink out received 3 rows:
  missing     {"key":"3","n":1,"windowEnd":1767225610000,"windowStart":1767225600000}  (line 25)
  unexpected  {"key":"1","n":1,"windowEnd":1767225620000,"windowStart":1767225610000}
  changed     n: expected 1, received 2  (line 23)
                expected {"key":"0","n":1,"windowEnd":1767225610000,"windowStart":1767225600000}
                received {"key":"0","n":2,"windowEnd":1767225610000,"windowStart":1767225600000}
job_test.yaml:26: sink late received 1 row:
  expected 0 rows (count), received 1
  received    {"idx":7}
`, spectest.Explain(fail, ""))
}

// An interval join of two sources, inner and left outer: a left row
// matches the right rows from 1 s before it to 2 s after it, by user.
func TestIntervalJoinOfTwoSources(t *testing.T) {
	spec := func(how string) string {
		return `
name: join
operators:
  - {uid: views, type: kafka, brokers: [b:9092], topic: views, format: json, eventTime: {timestamp: ts}}
  - {uid: buys, type: kafka, brokers: [b:9092], topic: buys, format: json, eventTime: {timestamp: ts, maxOutOfOrderness: 5s}}
  - uid: j
    type: intervalJoin
    left: {from: views, key: user}
    right: {from: buys, key: user}
    lower: -1s
    upper: 2s
    how: ` + how + `
    select: {user: left.user, page: left.page, amount: right.amount}
  - {uid: out, type: print, from: [j]}
`
	}
	tests := `
tests:
  - name: joined by user within the interval
    inputs:
      views:
        - value: {user: a, page: p1, ts: 1767225600000}
        - value: {user: b, page: p2, ts: 1767225600000}
        - value: {user: c, page: p3, ts: 1767225600000}
      buys:
        - value: {user: a, amount: 3, ts: 1767225601000}
        - value: {user: a, amount: 4, ts: 1767225599000}   # out of order, within the bound
        - value: {user: b, amount: 5, ts: 1767225602001}   # 2001 ms after: outside
    expect:
      out:
        - {user: a, page: p1, amount: 3}
        - {user: a, page: p1, amount: 4}
`
	inner := run(t, load(t, spec("inner"), tests))["joined by user within the interval"]
	assert.True(t, inner.Passed, spectest.Explain(inner, ""))

	left := run(t, load(t, spec("left"), tests))["joined by user within the interval"]
	require.False(t, left.Passed)
	assert.Equal(t, `job_test.yaml:14: sink out received 4 rows:
  unexpected  {"amount":null,"page":"p2","user":"b"}
  unexpected  {"amount":null,"page":"p3","user":"c"}
`, spectest.Explain(left, ""), "a left join also emits the views nothing matched")
}

// ordered, contains and count, passing and failing; a row's key and
// timestamp with records.
func TestConditions(t *testing.T) {
	s := load(t, `
name: copy
operators:
  - {uid: in, type: kafka, brokers: [b:9092], topic: t}
  - {uid: out, type: kafka, from: [in], brokers: [b:9092], topic: u}
`, `
tests:
  - name: in order
    inputs: {in: [{value: a}, {value: b}, {value: c}]}
    expect: {out: {ordered: true, rows: [a, b, c]}}
  - name: out of order
    inputs: {in: [{value: a}, {value: b}, {value: c}]}
    expect: {out: {ordered: true, rows: [a, c, b]}}
  - name: contains in order
    inputs: {in: [{value: a}, {value: b}, {value: c}]}
    expect: {out: {ordered: true, contains: [a, c], count: 3}}
  - name: contains out of order
    inputs: {in: [{value: a}, {value: b}, {value: c}]}
    expect: {out: {ordered: true, contains: [c, a]}}
  - name: contains missing
    inputs: {in: [{value: a}, {value: b}]}
    expect: {out: {contains: [x], count: 3}}
  - name: keys and timestamps
    inputs: {in: [{value: a, key: k1, timestamp: 5}, {value: a, key: k2, timestamp: 6}]}
    expect: {out: {records: [{value: a, key: k2}, {value: a, key: k1, timestamp: 7}]}}
`)
	res := run(t, s)
	for _, name := range []string{"in order", "contains in order"} {
		assert.True(t, res[name].Passed, "%s: %s", name, spectest.Explain(res[name], ""))
	}
	assert.Equal(t, `job_test.yaml:8: sink out received 3 rows:
  the rows arrived in another order (ordered: true): row 2 is "b", expected "c" (line 8)
`, spectest.Explain(res["out of order"], ""))
	assert.Equal(t, `job_test.yaml:14: sink out received 3 rows:
  the rows contains lists arrived, but not in its order (ordered: true): "a" (line 14) came too early
  received    "a"
  received    "b"
  received    "c"
`, spectest.Explain(res["contains out of order"], ""))
	assert.Equal(t, `job_test.yaml:17: sink out received 2 rows:
  missing     "x"  (line 17)
  expected 3 rows (count), received 2
  received    "a"
  received    "b"
`, spectest.Explain(res["contains missing"], ""))
	assert.Equal(t, `job_test.yaml:20: sink out received 2 rows:
  changed     (timestamp): expected 7, received 5  (line 20)
                expected "a" key "k1" timestamp 7
                received "a" key "k1" timestamp 5
`, spectest.Explain(res["keys and timestamps"], ""), "the row with a key alone matches k2; k1's timestamp differs")
}

// Values compare by meaning: 1 and 1.0 are one number, key order does not
// matter, text that is not JSON is a string.
func TestValuesCompareByMeaning(t *testing.T) {
	s := load(t, `
name: copy
operators:
  - {uid: in, type: kafka, brokers: [b:9092], topic: t}
  - {uid: m, type: map, from: [in], expr: '{"b": 2.0, "a": [1, {"x": 0.5}]}'}
  - {uid: out, type: print, from: [m]}
  - {uid: raw, type: print, from: [in]}
`, `
tests:
  - name: same meaning
    inputs: {in: [{value: "not json"}, {value: '{"quoted": "json text"}'}]}
    expect:
      out: [{a: [1.0, {x: 0.5}], b: 2}, {a: [1, {x: 0.50}], b: 2.0}]
      raw: ["not json", {quoted: json text}]
`)
	r := run(t, s)["same meaning"]
	assert.True(t, r.Passed, spectest.Explain(r, ""))
}

// error: a test may expect the job to fail; the failure of a job that
// should not fail is the test's.
func TestJobFailures(t *testing.T) {
	s := load(t, `
name: fails
operators:
  - {uid: in, type: kafka, brokers: [b:9092], topic: t, format: json}
  - {uid: m, type: map, from: [in], expr: '{"r": 10 / d}'}
  - {uid: out, type: print, from: [m]}
`, `
tests:
  - name: expected
    error: 'expression "{\"r\": 10 / d}"'
    inputs: {in: [{value: {d: x}}]}
  - name: unexpected
    inputs: {in: [{value: {d: x}}]}
  - name: did not fail
    error: boom
    inputs: {in: [{value: {d: 2}}]}
    expect: {out: [{r: 5}]}
`)
	res := run(t, s)
	assert.True(t, res["expected"].Passed, spectest.Explain(res["expected"], ""))
	assert.Contains(t, res["unexpected"].Error, `the job failed: operator m subtask 0: record 1 since the start (value "{\"d\":\"x\"}")`)
	assert.Equal(t, `the job finished; the test expects it to fail with "boom" (error)`, res["did not fail"].Error)
}

// A tests file that is wrong is refused with every problem at its line and
// column, and what to do.
func TestBadTestsFileRefusedAtLineAndColumn(t *testing.T) {
	_, err := spectest.Load(registry, engine.Defaults{}, "job.yaml", []byte(windowSpec), "job_test.yaml", []byte(`tests:
  - name: one
    inputs:
      source:
        - {value: {idx: 1}, timestamp: 1}
      src:
        - {value: {idx: 1}}
        - {value: {idx: 1}, timestamp: yesterday}
        - {watermark: 5, value: 1}
        - {key: k, timestamp: 1}
    expect:
      outt: []
      out: {ordred: true, rows: []}
      late: {}
  - name: one
    inputs: []
    expct: {}
`))
	var se *api.SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, `job_test.yaml:4:7: tests[0].inputs.source: "source" is not a source of job.yaml; inputs name the job's sources (src)
job_test.yaml:7:11: tests[0].inputs.src[0]: missing timestamp: source "src" takes event time from the record's own timestamp (its eventTime has no timestamp expression); give timestamp: in ms since the epoch or RFC 3339
job_test.yaml:8:40: tests[0].inputs.src[1].timestamp: expected a time in ms since the epoch (1767225600000) or RFC 3339 (2026-01-01T00:00:00Z), got "yesterday"
job_test.yaml:9:11: tests[0].inputs.src[2]: an entry is a record (value, key, timestamp) or a watermark (watermark alone), not both
job_test.yaml:10:11: tests[0].inputs.src[3]: missing value: a record needs value: (JSON as YAML, or text), or write a watermark: entry
job_test.yaml:12:7: tests[0].expect.outt: "outt" is not a sink of job.yaml; expect names the job's sinks (late, out)
job_test.yaml:13:13: tests[0].expect.out.ordred: unknown field "ordred"; did you mean "ordered"?
job_test.yaml:14:13: tests[0].expect.late: nothing to check: give rows (exactly these), records (with key and timestamp), contains (at least these) or count
job_test.yaml:15:11: tests[1].name: duplicate test name "one" (also tests[0]); give every test its own name
job_test.yaml:16:13: tests[1].inputs: expected a mapping, got a list
job_test.yaml:17:5: tests[1].expct: unknown field "expct"; did you mean "expect"?`, err.Error())
}

// A spec that does not compile is refused as flinkgo validate refuses it;
// a tests file that is not YAML, at its syntax error.
func TestBadSpecOrSyntaxRefused(t *testing.T) {
	_, err := spectest.Load(registry, engine.Defaults{}, "job.yaml", []byte("name: x\noperators:\n  - {uid: a, type: nope}\n"), "job_test.yaml", []byte("tests: []\n"))
	require.ErrorContains(t, err, `job.yaml:3:`)
	require.ErrorContains(t, err, `unknown operator type "nope"`)

	_, err = spectest.Load(registry, engine.Defaults{}, "job.yaml", []byte(windowSpec), "job_test.yaml", []byte("tests: [\n"))
	require.ErrorContains(t, err, "job_test.yaml:")
	require.ErrorContains(t, err, "YAML syntax error")

	_, err = spectest.Load(registry, engine.Defaults{}, "job.yaml", []byte(windowSpec), "job_test.yaml", []byte("tests: []\n"))
	require.EqualError(t, err, "job_test.yaml:1:8: tests: no tests: add at least one (name, inputs, expect)")
}

// The shipped examples' tests (configs/jobs) pass; e2e runs them through
// the binary too.
func TestShippedExamples(t *testing.T) {
	files, err := filepath.Glob("../../configs/jobs/*_test.yaml")
	require.NoError(t, err)
	for _, dir := range []string{"nexmark", "nexmark-sql"} {
		more, _ := filepath.Glob("../../configs/jobs/" + dir + "/*_test.yaml")
		files = append(files, more...)
	}
	require.NotEmpty(t, files)
	for _, tests := range files {
		spec, _ := spectest.SpecFileFor(tests, spectest.FileExists)
		specSrc, err := os.ReadFile(spec)
		require.NoError(t, err)
		testsSrc, err := os.ReadFile(tests)
		require.NoError(t, err)
		s, err := spectest.Load(registry, engine.Defaults{}, spec, specSrc, tests, testsSrc)
		require.NoError(t, err)
		for _, r := range s.Run(context.Background(), spectest.Options{}) {
			assert.True(t, r.Passed, "%s: %s\n%s", tests, r.Name, spectest.Explain(r, "  "))
		}
	}
}

func TestFileNames(t *testing.T) {
	assert.Equal(t, "a/job_test.yaml", spectest.TestsFileFor("a/job.yaml"))
	assert.Equal(t, "job_test.yaml", spectest.TestsFileFor("job.yml"))
	none := func(string) bool { return false }
	spec, ok := spectest.SpecFileFor("a/job_test.yaml", none)
	assert.True(t, ok)
	assert.Equal(t, "a/job.yaml", spec)
	_, ok = spectest.SpecFileFor("a/job.yaml", none)
	assert.False(t, ok)
	// A SQL script's tests: job.sql when no job.yaml is beside them.
	sqlOnly := func(f string) bool { return f == "a/job.sql" }
	spec, _ = spectest.SpecFileFor("a/job_test.yaml", sqlOnly)
	assert.Equal(t, "a/job.sql", spec)
	both := func(f string) bool { return f == "a/job.sql" || f == "a/job.yaml" }
	spec, _ = spectest.SpecFileFor("a/job_test.yaml", both)
	assert.Equal(t, "a/job.yaml", spec)
	assert.False(t, strings.HasSuffix(spectest.TestsFileFor("x.yaml"), ".yaml.yaml"))
}

// A job that does not finish within the timeout fails its test, and is
// canceled.
func TestTimeout(t *testing.T) {
	slow := runtime.Definition{Type: "slow", Kind: api.KindOperator, Doc: "sleeps 300ms a batch",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			return &runtime.Plan{NewOperator: func() runtime.Operator { return slowOp{} }}
		}}
	reg := runtime.MustRegistry(append(all.Definitions(), slow)...)
	s, err := spectest.Load(reg, engine.Defaults{}, "job.yaml", []byte(`
name: slow
operators:
  - {uid: in, type: kafka, brokers: [b:9092], topic: t}
  - {uid: z, type: slow, from: [in]}
  - {uid: out, type: print, from: [z]}
`), "job_test.yaml", []byte("tests: [{name: slow, inputs: {in: [{value: a}]}, expect: {out: [a]}}]\n"))
	require.NoError(t, err)
	r := s.RunTest(context.Background(), s.Tests[0], 50*time.Millisecond)
	assert.False(t, r.Passed)
	assert.Equal(t, "the job did not finish within 50ms (--timeout)", r.Error)
}

type slowOp struct{}

func (slowOp) Open(*runtime.Context) error { return nil }
func (slowOp) Close() error                { return nil }

func (slowOp) Process(b *runtime.Batch, out runtime.Output) error {
	time.Sleep(300 * time.Millisecond)
	for _, r := range b.Records {
		out.Emit(r)
	}
	return nil
}

// A source's side outputs stay wired when it is replaced (a type of the
// user's with one), and records an operator cannot process reach its
// dead-letter sink (onError: sideOutput).
func TestSideOutputsAndDeadLetters(t *testing.T) {
	src := runtime.Definition{Type: "mine", Kind: api.KindSource, Doc: "a source with a side output",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			return &runtime.Plan{SideOutputs: []string{"bad"}, Bounded: true}
		}}
	reg := runtime.MustRegistry(append(all.Definitions(), src)...)
	s, err := spectest.Load(reg, engine.Defaults{}, "job.yaml", []byte(`
name: dead-letters
operators:
  - {uid: in, type: mine}
  - {uid: m, type: map, from: [in], expr: '{"r": 10 / d}', onError: sideOutput}
  - {uid: out, type: print, from: [m]}
  - {uid: dead, type: print, from: [m.errors]}
  - {uid: bad, type: print, from: [in.bad]}
`), "job_test.yaml", []byte(`
tests:
  - name: a record the map cannot divide is a dead letter
    inputs: {in: [{value: {d: 2}}, {value: {d: x}}]}
    expect:
      out: [{r: 5}]
      dead: {count: 1}
      bad: []
`))
	require.NoError(t, err)
	r := run(t, s)["a record the map cannot divide is a dead letter"]
	assert.True(t, r.Passed, spectest.Explain(r, ""))
}

// A SQL script is tested as the spec it plans into: its tables are the
// uids; a wrong expectation fails with the differing row, and a tests
// file naming a column-less uid is refused at its line.
func TestSQLScript(t *testing.T) {
	const script = `CREATE TABLE src (idx BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (idx BIGINT, twice BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT idx, idx * 2 AS twice FROM src WHERE idx > 1;
`
	tests := `tests:
  - name: right
    inputs:
      src: [{value: {idx: 1}}, {value: {idx: 2}}, {value: {idx: 3}}]
    expect:
      out: [{idx: 2, twice: 4}, {idx: 3, twice: 6}]
  - name: wrong
    inputs:
      src: [{value: {idx: 2}}]
    expect:
      out: [{idx: 2, twice: 5}]
`
	s, err := spectest.Load(registry, engine.Defaults{}, "job.sql", []byte(script), "job_test.yaml", []byte(tests))
	require.NoError(t, err)
	res := map[string]spectest.Result{}
	for _, r := range s.Run(context.Background(), spectest.Options{}) {
		res[r.Name] = r
	}
	assert.True(t, res["right"].Passed, spectest.Explain(res["right"], ""))
	require.False(t, res["wrong"].Passed)
	assert.Contains(t, spectest.Explain(res["wrong"], ""), `"twice":4`)

	_, err = spectest.Load(registry, engine.Defaults{}, "job.sql", []byte(script), "job_test.yaml", []byte(`tests:
  - name: no such table
    inputs:
      bids: [{value: {idx: 1}}]
`))
	require.ErrorContains(t, err, "job_test.yaml:4:")
	require.ErrorContains(t, err, "bids")
}
