package engine

import (
	"fmt"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// poisonWatch remembers the record that failed the last attempt: when the
// next attempt fails on the same record (runtime.RecordFailure.Same), the
// record is poison, a restart cannot get past it, and the job is FAILED
// naming it instead of restarting on it by its strategy (unlimited by
// default with checkpointing). Any other failure, or none, forgets it.
type poisonWatch struct {
	last *runtime.RecordFailure
}

// check returns err, or, for the same record failing a second time, an
// error that suppresses restarts and says so.
func (w *poisonWatch) check(err error) error {
	f, ok := runtime.AsRecordFailure(err)
	if !ok {
		w.last = nil
		return err
	}
	if w.last.Same(f) {
		w.last = nil
		return runtime.SuppressRestarts(&poisonError{f: f})
	}
	w.last = f
	return err
}

// poisonError is the job's error for a poison record.
type poisonError struct{ f *runtime.RecordFailure }

func (p *poisonError) Error() string {
	return fmt.Sprintf("operator %s failed on the same record again after a restart, so restarting cannot get past it: %s (value %q): %v; "+
		"the job is FAILED instead of restarting on it again (fix the record or the job, or set onError: skip or sideOutput on %s to go past such records)",
		p.f.Operator, p.what(), p.f.Value, p.f.Err, p.f.Operator)
}

func (p *poisonError) Unwrap() error { return p.f }

// what names the record: its position, or what failed (a timer, a result)
// when that is not an input record.
func (p *poisonError) what() string {
	if p.f.Site != "" {
		return p.f.Position()
	}
	return "record " + p.f.Position()
}
