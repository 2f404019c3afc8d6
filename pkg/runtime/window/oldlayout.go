package window

import (
	"errors"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// The old layout of tumbling and sliding windows (flinkgo before the
// panes, docs/window-panes.md) kept the same panes per key but no fired
// watermark: a timer per key said which of its windows was pending. Its
// snapshots restore into paneOp: the timers tell the watermark the windows
// fired up to, and paneOp goes on from there.

// restoresTimerLayout reports whether the restored state of the window is
// the old layout's: its panes without a fired watermark. Every restoring
// subtask sees the table's name and the union list, whichever key groups
// it gets, so every subtask decides alike.
func restoresTimerLayout(ctx *runtime.Context) bool {
	return ctx.RestoredKeyedState("panes") && ctx.OperatorState().Get(firedList) == nil
}

var errNoTimerLister = errors.New("the state was written by an older flinkgo (a timer per key) and this timer service cannot list the timers to convert it")

// firedOfTimerLayout is the watermark the restored windows of the old
// layout fired up to, by firedOfTimers over the subtask's panes and
// timers.
func (o *paneOp) firedOfTimerLayout() (int64, error) {
	lister, ok := o.ctx.Timers().(runtime.TimerLister)
	if !ok {
		return 0, errNoTimerLister
	}
	d := runtime.EventTime
	if o.cfg.processing {
		d = runtime.ProcessingTime
	}
	least := map[string]int64{}
	lister.EachTimer(d, func(key string, ts []int64) { least[key] = ts[0] })
	each := func(fn func(p int64, key string)) {
		for _, p := range o.panes.Starts() {
			o.panes.Slice(p).Range(func(key string, _ *accum) bool {
				fn(p, key)
				return true
			})
		}
	}
	return firedOfTimers(o.a, o.cfg.processing, each, least), nil
}

// firedOfTimers is the greatest window end -1 over the windows that fired
// for some key (MinWatermark when none did), given each key's panes (each
// calls fn with every pane start and key) and its least timer.
//
// Per key the old layout kept one timer at the time the key's first
// pending window fires (e-1 in event time, e in processing time), and
// timers to drop panes past their lateness, later still. So a window of a
// key's pane fired if and only if it fires before the key's least timer;
// a key with no timer fired all its windows. Windows that hold no pane of
// any key fired or not make no difference: they have no result.
//
// Each subtask finds the greatest over its own keys, which is at most the
// watermark of the snapshot, and at least the end of every window that
// fired for them: none fires again, none still pending is skipped. Until
// the watermark passes it, a record of a window without panes between it
// and the snapshot's watermark is not late (as with the old layout, which
// judged lateness by the new input watermark after a restore).
func firedOfTimers(a Assigner, processing bool, each func(fn func(p int64, key string)), least map[string]int64) int64 {
	fired := runtime.MinWatermark
	each(func(p int64, key string) {
		first, last := a.WindowEnds(p)
		t, ok := least[key]
		for e := last; e >= first; e -= a.Step() {
			at := e - 1
			if processing {
				at = e
			}
			if !ok || at < t {
				fired = max(fired, e-1)
				return
			}
		}
	})
	return fired
}
