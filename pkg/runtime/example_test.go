package runtime_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// printOut is an Output that prints what is emitted.
type printOut struct{}

func (printOut) Emit(r runtime.Record) { fmt.Printf("%s %s\n", r.Key, r.Value) }

func (printOut) EmitTo(tag string, r runtime.Record) { fmt.Printf("%s: %s %s\n", tag, r.Key, r.Value) }

func batchOf(values ...string) *runtime.Batch {
	b := runtime.NewBatch()
	for _, v := range values {
		b.Records = append(b.Records, runtime.Record{Key: []byte(v[:1]), Value: []byte(v)})
	}
	return b
}

// upper is a stateless operator: it emits each value in upper case.
type upper struct{}

func (upper) Open(*runtime.Context) error { return nil }
func (upper) Close() error                { return nil }

func (upper) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		r.Value = bytes.ToUpper(r.Value) // a new slice: the batch is untouched
		out.Emit(r)
	}
	return nil
}

// A stateless operator, its definition, and a call of Process as the
// engine makes it.
func Example_statelessOperator() {
	def := runtime.Definition{Type: "upper", Kind: api.KindOperator, Doc: "upper-cases values",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			c.Decode(&struct{}{}) // no options: any given is reported
			return &runtime.Plan{NewOperator: func() runtime.Operator { return upper{} }}
		}}
	reg := runtime.MustRegistry(def)
	fmt.Println(reg.Types())

	op := upper{}
	_ = op.Open(runtime.NewContext(runtime.ContextOptions{UID: "up"}))
	_ = op.Process(batchOf("apple", "banana"), printOut{})
	// Output:
	// [upper]
	// a APPLE
	// b BANANA
}

// counter keeps a count per key in keyed state.
type counter struct {
	ctx    *runtime.Context
	counts *state.Value[int64]
}

func (c *counter) Open(ctx *runtime.Context) (err error) {
	c.ctx = ctx
	c.counts, err = runtime.NewValue(ctx, "counts", state.Int64Codec{})
	return err
}

func (c *counter) Close() error { return nil }

func (c *counter) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		c.ctx.SetCurrentKey(r.Key) // the handles read and write this key
		n, _ := c.counts.Get()
		c.counts.Put(n + 1)
		out.Emit(runtime.Record{Key: r.Key, Value: strconv.AppendInt(nil, n+1, 10)})
	}
	return nil
}

// A keyed stateful operator. Its Plan sets KeyedInput: the engine routes
// each key to one subtask, snapshots the handles at every checkpoint and
// redistributes them by key group on a restore at another parallelism.
func Example_keyedOperator() {
	kb := state.NewKeyedBackend(128, state.AllKeyGroups(128)) // the engine's, in a job
	op := &counter{}
	_ = op.Open(runtime.NewContext(runtime.ContextOptions{UID: "count", Keyed: kb, MaxParallelism: 128}))
	_ = op.Process(batchOf("apple", "avocado", "banana", "apricot"), printOut{})
	// Output:
	// a 1
	// a 2
	// b 1
	// a 3
}

// sequence is a source of 1, 2, … up to n whose position survives
// failures: it is in the operator state of every checkpoint.
type sequence struct {
	n, next int64
	ctx     *runtime.Context
}

func (s *sequence) Open(ctx *runtime.Context) error {
	s.ctx, s.next = ctx, 1
	for _, item := range ctx.OperatorState().Get("position") { // restored, if any
		d := state.NewDecoder("sequence position", item, 1)
		s.next = d.Varint()
		if err := d.Finish(); err != nil {
			return err
		}
	}
	return nil
}

func (s *sequence) Poll(b *runtime.Batch) error {
	for len(b.Records) < cap(b.Records) && s.next <= s.n {
		b.Records = append(b.Records, runtime.Record{Value: strconv.AppendInt(nil, s.next, 10)})
		s.next++
	}
	if s.next > s.n {
		return runtime.ErrEndOfInput
	}
	return nil
}

// SnapshotState runs between two Polls: every record polled so far is
// before the barrier.
func (s *sequence) SnapshotState(int64) error {
	e := state.NewEncoder(1)
	e.Varint(s.next)
	s.ctx.OperatorState().Set("position", state.Union, [][]byte{e.Encoded()})
	return nil
}

func (s *sequence) Close() error { return nil }

// A source with a replayable position: snapshot after three records, and a
// new instance restored from that state goes on at the fourth.
func Example_replayableSource() {
	first := &sequence{n: 5}
	st := state.NewOperatorState()
	_ = first.Open(runtime.NewContext(runtime.ContextOptions{UID: "seq", State: st}))
	b := runtime.NewBatch()
	b.Records = b.Records[:0:3]
	_ = first.Poll(b)
	_ = first.SnapshotState(1)

	again := &sequence{n: 5}
	_ = again.Open(runtime.NewContext(runtime.ContextOptions{UID: "seq", State: st, Restored: true}))
	rest := runtime.NewBatch()
	fmt.Println(again.Poll(rest) == runtime.ErrEndOfInput)
	for _, r := range rest.Records {
		fmt.Println(string(r.Value))
	}
	// Output:
	// true
	// 4
	// 5
}

// files is a two-phase sink: the records of each checkpoint are written to
// a hidden file at the barrier (pre-commit) and renamed into place when the
// checkpoint completes (commit). Committing is idempotent: a file already
// renamed is committed.
type files struct {
	dir     string
	ctx     *runtime.Context
	buf     []byte
	pending []int64 // checkpoints pre-committed, not yet committed
}

func (f *files) Open(ctx *runtime.Context) error {
	f.ctx = ctx
	for _, item := range ctx.OperatorState().Get("pending") { // restored committables
		d := state.NewDecoder("files committable", item, 1)
		id := d.Varint()
		if err := d.Finish(); err != nil {
			return err
		}
		f.pending = append(f.pending, id)
	}
	if err := vfs.MkdirAllDurable(ctx.FS(), f.dir, 0o755); err != nil {
		return err
	}
	return f.NotifyCheckpointComplete(1<<63 - 1) // they belong to a complete checkpoint
}

func (f *files) Process(b *runtime.Batch, _ runtime.Output) error {
	for _, r := range b.Records {
		f.buf = append(append(f.buf, r.Value...), '\n')
	}
	return nil
}

func (f *files) name(id int64, hidden bool) string {
	n := fmt.Sprintf("part-%d-%d", f.ctx.Subtask(), id)
	if hidden {
		n = "." + n
	}
	return filepath.Join(f.dir, n)
}

func (f *files) SnapshotState(id int64) error {
	if err := vfs.WriteFileAtomic(f.ctx.FS(), f.name(id, true), f.buf); err != nil {
		return err
	}
	f.buf = nil
	f.pending = append(f.pending, id)
	var items [][]byte
	for _, p := range f.pending {
		e := state.NewEncoder(1)
		e.Varint(p)
		items = append(items, e.Encoded())
	}
	f.ctx.OperatorState().Set("pending", state.Split, items)
	return nil
}

func (f *files) NotifyCheckpointComplete(id int64) error {
	var keep []int64
	for _, p := range f.pending {
		if p > id {
			keep = append(keep, p)
			continue
		}
		err := f.ctx.FS().Rename(f.name(p, true), f.name(p, false))
		if done, _ := vfs.Exists(f.ctx.FS(), f.name(p, false)); err != nil && !done {
			return err // neither hidden nor final: lost, and loudly so
		}
	}
	f.pending = keep
	return nil
}

func (f *files) NotifyCheckpointAborted(int64) {} // the next checkpoint commits it

func (f *files) Close() error { return nil }

// A two-phase sink on the crash-simulating filesystem: nothing is visible
// before its checkpoint completes, and a sink restored after a crash
// commits what the checkpoint pre-committed.
func Example_twoPhaseSink() {
	mem := vfs.NewMem()
	st := state.NewOperatorState()
	sink := &files{dir: "/out"}
	_ = sink.Open(runtime.NewContext(runtime.ContextOptions{UID: "files", FS: mem, State: st}))
	_ = sink.Process(batchOf("apple", "banana"), nil)
	_ = sink.SnapshotState(1)
	visible, _ := vfs.Exists(mem, "/out/part-0-1")
	fmt.Println("visible after pre-commit:", visible)

	// The machine loses power before the commit; the job restores from
	// checkpoint 1, which holds the committable.
	crashed := mem.CrashClone(vfs.PowerLoss)
	restored := &files{dir: "/out"}
	_ = restored.Open(runtime.NewContext(runtime.ContextOptions{UID: "files", FS: crashed, State: st, Restored: true}))
	data, _ := vfs.ReadFile(crashed, "/out/part-0-1")
	fmt.Printf("after restore: %q\n", data)
	// Output:
	// visible after pre-commit: false
	// after restore: "apple\nbanana\n"
}
