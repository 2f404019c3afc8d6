package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A module outside this one (a replace directive to the checkout) writes an
// operator with keyed state, a replayable source and a two-phase sink
// against the public packages only, builds a flinkgo binary carrying them,
// and runs a unit test of them with the crash-simulating filesystem: proof
// that nothing an extension needs is internal.
func TestExternalModuleBuildsAgainstThePublicAPI(t *testing.T) {
	parallel(t)
	checkout, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("go.mod", "module example.com/ext\n\ngo 1.26.8\n\nrequire github.com/flinkgo/flinkgo v0.0.0\n\nreplace github.com/flinkgo/flinkgo => "+checkout+"\n")
	write("ext.go", externalExtension)
	write("ext_test.go", externalExtensionTest)
	write("cmd/ext/main.go", `package main

import (
	ext "example.com/ext"
	"github.com/flinkgo/flinkgo/pkg/flinkgo"
)

func main() { flinkgo.Main(flinkgo.WithOperators(ext.Definitions()...)) }
`)
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	require.NoError(t, err)
	write("go.sum", string(sum))
	goCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %v:\n%s", args, out)
	}
	goCmd("build", "-o", filepath.Join(dir, "ext-flinkgo"), "./cmd/ext")
	goCmd("vet", "./...")
	goCmd("test", "-count=1", "./...")

	e := newEnv(t)
	e.bin = filepath.Join(dir, "ext-flinkgo")
	r := e.run("validate", "--types")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "ext-counter")
	require.Contains(t, r.stdout, "ext-ticks")
	require.Contains(t, r.stdout, "ext-files")
}

const externalExtension = `// Package ext is an extension written outside flinkgo's module.
package ext

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Definitions are the extension's operator types.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "ext-ticks", Kind: api.KindSource, Doc: "counts up from 1: count",
			Configure: func(c *runtime.ConfigContext) *runtime.Plan {
				var o struct {
					Count int64 ` + "`yaml:\"count\"`" + `
				}
				c.Decode(&o)
				if o.Count < 0 {
					c.Errorf("count", "must be 0 or more")
					return nil
				}
				return &runtime.Plan{Bounded: true, NewSource: func() runtime.Source { return &Ticks{Count: o.Count} }}
			}},
		{Type: "ext-counter", Kind: api.KindOperator, Doc: "counts records per key",
			Configure: func(c *runtime.ConfigContext) *runtime.Plan {
				return &runtime.Plan{KeyedInput: true, NewOperator: func() runtime.Operator { return &Counter{} }}
			}},
		{Type: "ext-files", Kind: api.KindSink, Doc: "one file per checkpoint, visible when it completes: dir",
			Configure: func(c *runtime.ConfigContext) *runtime.Plan {
				var o struct {
					Dir string ` + "`yaml:\"dir,required\"`" + `
				}
				c.Decode(&o)
				return &runtime.Plan{NeedsCheckpointing: "ext-files commits on checkpoints", NewOperator: func() runtime.Operator { return &Files{Dir: o.Dir} }}
			}},
	}
}

// Ticks is a source with a replayable position.
type Ticks struct {
	Count int64
	ctx   *runtime.Context
	next  int64
}

func (s *Ticks) Open(ctx *runtime.Context) error {
	s.ctx, s.next = ctx, 1
	for _, it := range ctx.OperatorState().Get("next") {
		d := state.NewDecoder("ext-ticks position", it, 1)
		s.next = d.Varint()
		if err := d.Finish(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Ticks) Poll(b *runtime.Batch) error {
	for len(b.Records) < cap(b.Records) && s.next <= s.Count {
		b.Records = append(b.Records, runtime.Record{Value: []byte(strconv.FormatInt(s.next, 10))})
		s.next++
	}
	if s.next > s.Count {
		return runtime.ErrEndOfInput
	}
	return nil
}

func (s *Ticks) SnapshotState(int64) error {
	e := state.NewEncoder(1)
	e.Varint(s.next)
	s.ctx.OperatorState().Set("next", state.Union, [][]byte{e.Encoded()})
	return nil
}

func (s *Ticks) Close() error { return nil }

// Counter keeps a count per key.
type Counter struct {
	ctx    *runtime.Context
	counts *state.Value[int64]
}

func (c *Counter) Open(ctx *runtime.Context) (err error) {
	c.ctx = ctx
	c.counts, err = runtime.NewValue(ctx, "count", state.Int64Codec{})
	return err
}

func (c *Counter) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		c.ctx.SetCurrentKey(r.Key)
		n, _ := c.counts.Get()
		c.counts.Put(n + 1)
		if out != nil {
			out.Emit(runtime.Record{Key: r.Key, Value: []byte(fmt.Sprintf("%s=%d", r.Key, n+1))})
		}
	}
	return nil
}

func (c *Counter) Close() error { return nil }

// Files is a two-phase sink: records of a checkpoint go to a hidden file,
// renamed into place when the checkpoint completes.
type Files struct {
	Dir     string
	ctx     *runtime.Context
	buf     []byte
	pending map[int64]string
}

func (f *Files) Open(ctx *runtime.Context) error {
	f.ctx, f.pending = ctx, map[int64]string{}
	return vfs.MkdirAllDurable(ctx.FS(), f.Dir, 0o755)
}

func (f *Files) Process(b *runtime.Batch, _ runtime.Output) error {
	for _, r := range b.Records {
		f.buf = append(append(f.buf, r.Value...), '\n')
	}
	return nil
}

func (f *Files) SnapshotState(id int64) error {
	hidden := filepath.Join(f.Dir, fmt.Sprintf(".part-%d-%d", f.ctx.Subtask(), id))
	if err := vfs.WriteFileAtomic(f.ctx.FS(), hidden, f.buf); err != nil {
		return err
	}
	f.buf, f.pending[id] = nil, hidden
	return nil
}

func (f *Files) NotifyCheckpointComplete(id int64) error {
	for cid, hidden := range f.pending {
		if cid <= id {
			if err := f.ctx.FS().Rename(hidden, filepath.Join(f.Dir, filepath.Base(hidden)[1:])); err != nil {
				return err
			}
			delete(f.pending, cid)
		}
	}
	return nil
}

func (f *Files) NotifyCheckpointAborted(int64) {}

func (f *Files) Close() error { return nil }

var (
	_ runtime.Source             = (*Ticks)(nil)
	_ runtime.Operator           = (*Counter)(nil)
	_ runtime.Snapshotter        = (*Files)(nil)
	_ runtime.CheckpointListener = (*Files)(nil)
)
`

const externalExtensionTest = `package ext

import (
	"testing"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

type collect struct{ got []string }

func (c *collect) Emit(r runtime.Record) { c.got = append(c.got, string(r.Value)) }

func (c *collect) EmitTo(string, runtime.Record) {}

func TestCounterAndFilesWithACrash(t *testing.T) {
	kb := state.NewKeyedBackend(128, state.AllKeyGroups(128))
	c := &Counter{}
	if err := c.Open(runtime.NewContext(runtime.ContextOptions{UID: "c", Keyed: kb, MaxParallelism: 128})); err != nil {
		t.Fatal(err)
	}
	out := &collect{}
	b := runtime.NewBatch()
	b.Records = append(b.Records, runtime.Record{Key: []byte("a")}, runtime.Record{Key: []byte("a")}, runtime.Record{Key: []byte("b")})
	if err := c.Process(b, out); err != nil || len(out.got) != 3 || out.got[1] != "a=2" {
		t.Fatalf("got %v, %v", out.got, err)
	}

	mem := vfs.NewMem()
	f := &Files{Dir: "/out"}
	if err := f.Open(runtime.NewContext(runtime.ContextOptions{UID: "f", FS: mem})); err != nil {
		t.Fatal(err)
	}
	_ = f.Process(b, nil)
	if err := f.SnapshotState(1); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(vfs.PowerLoss)
	if ok, _ := vfs.Exists(crashed, "/out/part-0-1"); ok {
		t.Fatal("visible before the checkpoint completed")
	}
	if err := f.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	if ok, _ := vfs.Exists(mem, "/out/part-0-1"); !ok {
		t.Fatal("not visible after the checkpoint completed")
	}
}
`
