package runtimetest

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Fired counts, by name, the failures "test-fail" operators injected.
var fired sync.Map // name → *atomic.Int64

// Fired returns how many failures the test-fail operators named name injected.
func Fired(name string) int64 {
	v, ok := fired.Load(name)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func counter(name string) *atomic.Int64 {
	v, _ := fired.LoadOrStore(name, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// failOptions: a pass-through operator that fails the job when it has seen
// `every` records in an attempt, at most `times` times in all (tracked under
// `name` across attempts), in processing or (at: snapshot) when a
// checkpoint arrives after that many records, or (at: notify) on the first
// checkpoint completion after that many records; at: open fails the
// subtask's Open (its restore) and at: close its Close, `times` times in all.
type failOptions struct {
	Name  string `yaml:"name,required"`
	Every int64  `yaml:"every,required"`
	Times int64  `yaml:"times"`
	At    string `yaml:"at"` // process (default), snapshot, notify, open (restore), close
}

var failDef = runtime.Definition{Type: "test-fail", Kind: api.KindOperator,
	Doc: "test only: passes records through and injects failures", Configure: func(c *runtime.ConfigContext) *runtime.Plan {
		var o failOptions
		c.Decode(&o)
		if o.Times == 0 {
			o.Times = 1
		}
		return &runtime.Plan{NewOperator: func() runtime.Operator { return &failOp{o: o} }}
	}}

type failOp struct {
	o    failOptions
	seen int64
}

func (f *failOp) Open(ctx *runtime.Context) error {
	if f.o.At == "open" && ctx.Attempt() > 0 {
		f.seen = f.o.Every // restores only: the first start has nothing to restore
		if f.due() {
			return fmt.Errorf("injected failure %q in open (restore) of attempt %d", f.o.Name, ctx.Attempt())
		}
	}
	return nil
}

func (f *failOp) Close() error {
	if f.o.At == "close" && f.due() {
		return fmt.Errorf("injected failure %q in close", f.o.Name)
	}
	return nil
}

func (f *failOp) due() bool {
	if f.seen < f.o.Every {
		return false
	}
	c := counter(f.o.Name)
	for {
		n := c.Load()
		if n >= f.o.Times {
			return false
		}
		if c.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (f *failOp) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		f.seen++
		if (f.o.At == "" || f.o.At == "process") && f.due() {
			return fmt.Errorf("injected failure %q in processing after %d records", f.o.Name, f.seen)
		}
		if out != nil {
			out.Emit(r)
		}
	}
	return nil
}

func (f *failOp) SnapshotState(id int64) error {
	if f.o.At == "snapshot" && f.due() {
		return fmt.Errorf("injected failure %q in snapshot %d", f.o.Name, id)
	}
	return nil
}

func (f *failOp) NotifyCheckpointComplete(id int64) error {
	if f.o.At == "notify" && f.due() {
		return fmt.Errorf("injected failure %q in notify-complete %d", f.o.Name, id)
	}
	return nil
}

func (f *failOp) NotifyCheckpointAborted(int64) {}
