// Package runtimetest provides operators for tests of the engine and of
// connectors: a collecting sink and a way to run a spec to completion. It is
// imported only by tests, so its types never reach the user's catalogue.
package runtimetest

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Collector gathers the values a "collect" sink received, by name.
type Collector struct {
	mu     sync.Mutex
	values map[string][]string
}

var collector = &Collector{values: map[string][]string{}}

var collectDef = runtime.Definition{Type: "test-collect", Kind: api.KindSink,
	Doc: "test only: keeps every value in memory under name", Configure: func(c *runtime.ConfigContext) *runtime.Plan {
		var o struct {
			Name  string       `yaml:"name,required"`
			Delay api.Duration `yaml:"delay"`
		}
		c.Decode(&o)
		// It copies every value during Process (string(r.Value)).
		return &runtime.Plan{InputValues: runtime.ValuesDropped,
			NewOperator: func() runtime.Operator { return &collectSink{name: o.Name, delay: o.Delay.D()} }}
	}}

// Values returns what the collect sink named name received so far.
func Values(name string) []string {
	collector.mu.Lock()
	defer collector.mu.Unlock()
	return append([]string(nil), collector.values[name]...)
}

// Reset forgets the values of name.
func Reset(name string) {
	collector.mu.Lock()
	defer collector.mu.Unlock()
	delete(collector.values, name)
}

type collectSink struct {
	name  string
	delay time.Duration
}

func (s *collectSink) Open(*runtime.Context) error { return nil }
func (s *collectSink) Close() error                { return nil }

func (s *collectSink) Process(b *runtime.Batch, _ runtime.Output) error {
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	collector.mu.Lock()
	defer collector.mu.Unlock()
	for _, r := range b.Records {
		collector.values[s.name] = append(collector.values[s.name], string(r.Value))
	}
	return nil
}

// Options for Start.
type Options struct {
	FS             vfs.FS
	CheckpointsDir string
	SavepointsDir  string
	Restore        string
	Faults         runtime.FaultHook
	// PebbleDir is where pebble jobs keep their DBs ("": the engine's
	// default, on FS).
	PebbleDir string
	Log       *zerolog.Logger // nil: no logging
	// Types are the operator types the spec may use besides this package's
	// test types (Definitions).
	Types []runtime.Definition
}

// Definitions returns the test operator types: test-collect, test-pass,
// test-keys and test-fail.
func Definitions() []runtime.Definition {
	return []runtime.Definition{collectDef, passDef, keysDef, failDef, timerDef}
}

// Registry returns a registry of the test types and types.
func Registry(t testing.TB, types []runtime.Definition) *runtime.Registry {
	t.Helper()
	reg, err := runtime.NewRegistry(append(Definitions(), types...)...)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	return reg
}

// Start compiles spec and starts it as a job.
func Start(t testing.TB, spec string, o Options) *engine.Job {
	t.Helper()
	g, err := engine.Compile(Registry(t, o.Types), "test.yaml", []byte(spec), engine.Defaults{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	var restore *engine.Restore
	if o.Restore != "" {
		restore, err = engine.LoadRestore(o.FS, o.Restore)
		if err != nil {
			t.Fatalf("restore: %v", err)
		}
	}
	log := zerolog.Nop()
	if o.Log != nil {
		log = *o.Log
	}
	return engine.StartJob(engine.JobOptions{ID: fmt.Sprintf("test%d", time.Now().UnixNano()), Graph: g,
		Env: &engine.Env{FS: o.FS, Faults: o.Faults, PebbleDir: o.PebbleDir}, Log: log, CheckpointsDir: o.CheckpointsDir,
		SavepointsDir: o.SavepointsDir, Restore: restore})
}

// Wait waits for the job to end and returns its final state.
func Wait(t testing.TB, j *engine.Job, timeout time.Duration) api.JobState {
	t.Helper()
	select {
	case <-j.Done():
	case <-time.After(timeout):
		t.Fatalf("job still %s after %s", j.State(), timeout)
	}
	return j.State()
}

var passDef = runtime.Definition{Type: "test-pass", Kind: api.KindOperator,
	Doc: "test only: forwards every record (a trivial operator for overhead benchmarks)", Configure: func(c *runtime.ConfigContext) *runtime.Plan {
		var o struct{}
		c.Decode(&o)
		return &runtime.Plan{NewOperator: func() runtime.Operator { return passOp{} }}
	}}

type passOp struct{}

func (passOp) Open(*runtime.Context) error { return nil }
func (passOp) Close() error                { return nil }

func (passOp) Process(b *runtime.Batch, out runtime.Output) error {
	for i := range b.Records {
		out.Emit(b.Records[i])
	}
	return nil
}

// KeySubtasks returns, for the test-keys operator named name, the subtasks
// that saw each key.
func KeySubtasks(name string) map[string]map[int]bool {
	keysMu.Lock()
	defer keysMu.Unlock()
	out := map[string]map[int]bool{}
	for k, v := range keysSeen[name] {
		out[k] = map[int]bool{}
		for s := range v {
			out[k][s] = true
		}
	}
	return out
}

var (
	keysMu   sync.Mutex
	keysSeen = map[string]map[string]map[int]bool{}
)

var keysDef = runtime.Definition{Type: "test-keys", Kind: api.KindSink,
	Doc: "test only: records which subtask saw each key", Configure: func(c *runtime.ConfigContext) *runtime.Plan {
		var o struct {
			Name string `yaml:"name,required"`
		}
		c.Decode(&o)
		return &runtime.Plan{NewOperator: func() runtime.Operator { return &keysOp{name: o.Name} }}
	}}

type keysOp struct {
	name    string
	subtask int
}

func (k *keysOp) Open(ctx *runtime.Context) error { k.subtask = ctx.Subtask(); return nil }
func (k *keysOp) Close() error                    { return nil }

func (k *keysOp) Process(b *runtime.Batch, _ runtime.Output) error {
	keysMu.Lock()
	defer keysMu.Unlock()
	m := keysSeen[k.name]
	if m == nil {
		m = map[string]map[int]bool{}
		keysSeen[k.name] = m
	}
	for _, r := range b.Records {
		s := m[string(r.Key)]
		if s == nil {
			s = map[int]bool{}
			m[string(r.Key)] = s
		}
		s[k.subtask] = true
	}
	return nil
}

// UniqueName gives a test its own collector name (cleared at its end).
func UniqueName(t testing.TB) string {
	clean := regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-")
	name := fmt.Sprintf("%s-%d", clean, time.Now().UnixNano())
	Reset(name)
	t.Cleanup(func() { Reset(name) })
	return name
}

// WaitUntil polls cond until it holds, failing the test after timeout.
func WaitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitCollected waits until the collect sink named name holds n values.
func WaitCollected(t testing.TB, timeout time.Duration, name string, n int) {
	t.Helper()
	WaitUntil(t, timeout, fmt.Sprintf("%d collected records in %s", n, name), func() bool {
		return len(Values(name)) >= n
	})
}

// WaitCheckpoint waits for a checkpoint completed after the call and
// returns it.
func WaitCheckpoint(t testing.TB, timeout time.Duration, j *engine.Job) *api.CheckpointInfo {
	t.Helper()
	var after int64
	if c := j.LatestCheckpoint(); c != nil {
		after = c.ID
	}
	var got *api.CheckpointInfo
	WaitUntil(t, timeout, "a completed checkpoint", func() bool {
		got = j.LatestCheckpoint()
		return got != nil && got.ID > after
	})
	return got
}

// Cancel cancels j and waits for it to end.
func Cancel(t testing.TB, timeout time.Duration, j *engine.Job) {
	t.Helper()
	if err := j.Cancel(); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	Wait(t, j, timeout)
}

// MaxCounts returns the highest count per key in the output of a count
// operator ({"key": k, "count": n} values).
func MaxCounts(t testing.TB, vals []string) map[string]int {
	t.Helper()
	final := map[string]int{}
	for _, v := range vals {
		var key string
		var n int
		if _, err := fmt.Sscanf(v, `{"key":%q,"count":%d}`, &key, &n); err != nil {
			t.Fatalf("not a count record %q: %v", v, err)
		}
		final[key] = max(final[key], n)
	}
	return final
}

// FinishedLines returns the lines of a file sink's finished files in dir,
// sorted (in-progress and pending files start with '.').
func FinishedLines(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	sort.Strings(out)
	return out
}
