// Package spectest runs the unit tests of a job spec (flinkgo test): each
// test feeds records to the job's sources and compares what reaches its
// sinks with what it expects. The job runs in-process on the engine, as
// the daemon runs it, with only its sources and sinks replaced by
// in-memory ones (engine.CompileOptions.Substitute): every operator
// between them is configured and runs unchanged, with the same event-time
// rules and state. See docs/testing-jobs.md for the file's shape.
package spectest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// TestsFileFor is the tests file beside a job spec: job.yaml's is
// job_test.yaml.
func TestsFileFor(spec string) string {
	ext := filepath.Ext(spec)
	return strings.TrimSuffix(spec, ext) + "_test.yaml"
}

// FileExists is SpecFileFor's exists on the local disk.
func FileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// SpecFileFor is the job spec a tests file beside it tests (job_test.yaml:
// job.yaml, or job.sql when exists says only the SQL script is there),
// and whether the name is a tests file's.
func SpecFileFor(tests string, exists func(string) bool) (string, bool) {
	for _, ext := range []string{".yaml", ".yml"} {
		if base, ok := strings.CutSuffix(tests, "_test"+ext); ok {
			if !exists(base+".yaml") && exists(base+".sql") {
				return base + ".sql", true
			}
			return base + ".yaml", true
		}
	}
	return "", false
}

// Suite is a tests file read against the job spec it tests.
type Suite struct {
	SpecFile  string
	TestsFile string
	Tests     []*Test

	spec     []byte
	reg      *runtime.Registry
	defaults engine.Defaults
	sources  map[string]*api.OperatorSpec // by uid
	sinks    []string
	// plans are the sources' and sinks' own plans, by uid: what wires
	// them into the job, for their in-memory replacements.
	plans map[string]*runtime.Plan
}

// Test is one test of a suite.
type Test struct {
	Name string
	// Line is where the test starts in the tests file.
	Line int

	inputs     map[string][]item // by source uid
	expect     []*expectation    // by sink uid, sorted
	endOfInput bool
	wantError  string
}

// item is a record or a watermark fed to a source.
type item struct {
	watermark bool
	ts        int64 // the record's timestamp, or the watermark
	key       []byte
	value     []byte
}

// expectation is what one sink must receive.
type expectation struct {
	sink     string
	line     int
	ordered  bool
	exact    []Row // rows: or records: (exactSet)
	exactSet bool
	contains []Row
	count    *int
}

// Load reads a tests file (its text in tests) against the job spec in
// spec, compiled with the operator types of reg as `flinkgo validate`
// compiles it. A spec that does not compile is refused with its
// problems; a tests file that is malformed or names what the job does not
// have, with every problem at its line and column (*api.SpecError).
func Load(reg *runtime.Registry, defaults engine.Defaults, specFile string, spec []byte, testsFile string, tests []byte) (*Suite, error) {
	g, err := engine.Compile(reg, specFile, spec, defaults)
	if err != nil {
		return nil, err
	}
	s := &Suite{SpecFile: specFile, TestsFile: testsFile, spec: spec, reg: reg, defaults: defaults,
		sources: map[string]*api.OperatorSpec{}, plans: map[string]*runtime.Plan{}}
	for _, v := range g.Vertices {
		switch v.Def.Kind {
		case api.KindSource:
			s.sources[v.Op.UID] = v.Op
			s.plans[v.Op.UID] = v.Plan
		case api.KindSink:
			s.sinks = append(s.sinks, v.Op.UID)
			s.plans[v.Op.UID] = v.Plan
		}
	}
	sort.Strings(s.sinks)
	d := api.NewDecoder(testsFile)
	root := d.ParseYAML(tests)
	if !root.IsZero() {
		var f fileSpec
		d.Decode(root, "", &f)
		if _, set := d.Positions["tests"]; set && len(f.Tests) == 0 && len(d.Errors.Errors) == 0 {
			d.ErrorAt("tests", "no tests: add at least one (name, inputs, expect)")
		}
		names := map[string]int{}
		for i := range f.Tests {
			path := fmt.Sprintf("tests[%d]", i)
			t := s.readTest(d, path, &f.Tests[i])
			if prev, dup := names[t.Name]; dup && t.Name != "" {
				d.ErrorAt(path+".name", "duplicate test name %q (also tests[%d]); give every test its own name", t.Name, prev)
			}
			names[t.Name] = i
			s.Tests = append(s.Tests, t)
		}
	}
	if err := d.Errors.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// The tests file as written.
type fileSpec struct {
	Tests []testSpec `yaml:"tests,required"`
}

type testSpec struct {
	Name       string `yaml:"name,required"`
	Inputs     byUID  `yaml:"inputs"`
	Expect     byUID  `yaml:"expect"`
	EndOfInput *bool  `yaml:"endOfInput"`
	Error      string `yaml:"error"`
}

// byUID is a mapping from operator uids to what a test says about them;
// the decoder records the position of each key (remain).
type byUID struct {
	Entries map[string]api.Node `yaml:",remain"`
}

type inputSpec struct {
	Value     api.Node `yaml:"value"`
	Key       *string  `yaml:"key"`
	Timestamp api.Node `yaml:"timestamp"`
	Watermark api.Node `yaml:"watermark"`
}

type expectSpec struct {
	Rows     []api.Node   `yaml:"rows"`
	Records  []recordSpec `yaml:"records"`
	Contains []api.Node   `yaml:"contains"`
	Count    *int         `yaml:"count"`
	Ordered  bool         `yaml:"ordered"`
}

type recordSpec struct {
	Value     api.Node `yaml:"value,required"`
	Key       *string  `yaml:"key"`
	Timestamp api.Node `yaml:"timestamp"`
}

func (s *Suite) readTest(d *api.Decoder, path string, ts *testSpec) *Test {
	t := &Test{Name: ts.Name, Line: d.PosOf(path).Line, inputs: map[string][]item{}, endOfInput: true, wantError: ts.Error}
	if ts.EndOfInput != nil {
		t.endOfInput = *ts.EndOfInput
	}
	for _, uid := range sortedKeys(ts.Inputs.Entries) {
		sub := path + ".inputs." + uid
		op := s.sources[uid]
		if op == nil {
			d.Errorf(d.PosOf(sub), sub, "%q is not a source of %s; inputs name the job's sources (%s)", uid, s.SpecFile, strings.Join(sortedKeys(s.sources), ", "))
			continue
		}
		var entries []inputSpec
		d.Decode(ts.Inputs.Entries[uid], sub, &entries)
		for i := range entries {
			if it, ok := readInput(d, fmt.Sprintf("%s[%d]", sub, i), &entries[i], op); ok {
				t.inputs[uid] = append(t.inputs[uid], it)
			}
		}
	}
	for _, uid := range sortedKeys(ts.Expect.Entries) {
		sub := path + ".expect." + uid
		if !slices.Contains(s.sinks, uid) {
			msg := fmt.Sprintf("%q is not a sink of %s; expect names the job's sinks (%s)", uid, s.SpecFile, strings.Join(s.sinks, ", "))
			if s.sources[uid] != nil {
				msg += "; put the records of a source under inputs"
			}
			d.Errorf(d.PosOf(sub), sub, "%s", msg)
			continue
		}
		t.expect = append(t.expect, readExpect(d, sub, uid, ts.Expect.Entries[uid]))
	}
	sort.SliceStable(t.expect, func(a, b int) bool { return t.expect[a].line < t.expect[b].line })
	return t
}

func readInput(d *api.Decoder, path string, in *inputSpec, op *api.OperatorSpec) (item, bool) {
	before := len(d.Errors.Errors)
	pos := d.PosOf(path)
	if !in.Watermark.IsZero() {
		if !in.Value.IsZero() || in.Key != nil || !in.Timestamp.IsZero() {
			d.Errorf(pos, path, "an entry is a record (value, key, timestamp) or a watermark (watermark alone), not both")
			return item{}, false
		}
		wm, ok := millis(d, path+".watermark", in.Watermark)
		if ok && op.EventTime == nil {
			d.Errorf(in.Watermark.Pos(), path+".watermark", "source %q declares no eventTime, so it has no watermarks; add eventTime to it or drop the watermark", op.UID)
		}
		return item{watermark: true, ts: wm}, len(d.Errors.Errors) == before
	}
	if in.Value.IsZero() {
		d.Errorf(pos, path, "missing value: a record needs value: (JSON as YAML, or text), or write a watermark: entry")
		return item{}, false
	}
	it := item{value: inputValue(in.Value.Value())}
	if in.Key != nil {
		it.key = []byte(*in.Key)
	}
	et := op.EventTime
	switch {
	case !in.Timestamp.IsZero() && et != nil && et.Timestamp != "":
		d.Errorf(in.Timestamp.Pos(), path+".timestamp", "source %q takes each record's event time from its value (eventTime.timestamp: %s), which would overwrite this; put the time in the value instead", op.UID, et.Timestamp)
	case !in.Timestamp.IsZero():
		it.ts, _ = millis(d, path+".timestamp", in.Timestamp)
	case et != nil && et.Timestamp == "":
		d.Errorf(pos, path, "missing timestamp: source %q takes event time from the record's own timestamp (its eventTime has no timestamp expression); give timestamp: in ms since the epoch or RFC 3339", op.UID)
	}
	return it, len(d.Errors.Errors) == before
}

// inputValue is the bytes of a record's value: a string as the text it
// is, anything else as JSON.
func inputValue(v any) []byte {
	if s, ok := v.(string); ok {
		return []byte(s)
	}
	return mustJSON(v)
}

// millis reads a time: ms since the epoch, or an RFC 3339 string.
func millis(d *api.Decoder, path string, n api.Node) (int64, bool) {
	switch v := n.Value().(type) {
	case int64:
		return v, true
	case string:
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UnixMilli(), true
		}
	}
	d.Errorf(n.Pos(), path, "expected a time in ms since the epoch (1767225600000) or RFC 3339 (2026-01-01T00:00:00Z), got %s", describe(n.Value()))
	return 0, false
}

func readExpect(d *api.Decoder, path, sink string, n api.Node) *expectation {
	e := &expectation{sink: sink, line: d.PosOf(path).Line} // the key's line: decoding moves it to the value's
	switch n.Value().(type) {
	case []any, nil:
		var rows []api.Node
		d.Decode(n, path, &rows)
		e.exact, e.exactSet = valueRows(rows), true
		return e
	case map[string]any:
	default:
		d.Errorf(n.Pos(), path, "expected the rows the sink receives (a list), or a mapping of rows, records, contains, count and ordered; got %s", describe(n.Value()))
		return e
	}
	var x expectSpec
	before := len(d.Errors.Errors)
	d.Decode(n, path, &x)
	_, rows := d.Positions[path+".rows"]
	_, records := d.Positions[path+".records"]
	_, contains := d.Positions[path+".contains"]
	switch {
	case rows && records:
		d.ErrorAt(path+".records", "rows and records both list what the sink receives: use one (records to compare keys or timestamps too)")
	case rows:
		e.exact, e.exactSet = valueRows(x.Rows), true
	case records:
		e.exactSet = true
		for i := range x.Records {
			e.exact = append(e.exact, readRecord(d, fmt.Sprintf("%s.records[%d]", path, i), &x.Records[i]))
		}
	}
	if contains {
		e.contains = valueRows(x.Contains)
	}
	e.count, e.ordered = x.Count, x.Ordered
	if e.count != nil && *e.count < 0 {
		d.ErrorAt(path+".count", "must be 0 or more, got %d", *e.count)
	}
	if !rows && !records && !contains && e.count == nil && len(d.Errors.Errors) == before {
		d.Errorf(n.Pos(), path, "nothing to check: give rows (exactly these), records (with key and timestamp), contains (at least these) or count")
	}
	return e
}

func readRecord(d *api.Decoder, path string, r *recordSpec) Row {
	row := Row{Value: canonical(r.Value.Value()), Line: d.PosOf(path).Line}
	if r.Key != nil {
		k := *r.Key
		row.Key = &k
	}
	if !r.Timestamp.IsZero() {
		if ts, ok := millis(d, path+".timestamp", r.Timestamp); ok {
			row.Timestamp = &ts
		}
	}
	return row
}

func valueRows(nodes []api.Node) []Row {
	rows := make([]Row, len(nodes))
	for i, n := range nodes {
		rows[i] = Row{Value: canonical(n.Value()), Line: n.Pos().Line}
	}
	return rows
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
