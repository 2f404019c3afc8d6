package engine

import "github.com/flinkgo/flinkgo/pkg/runtime"

// WatermarkTracker combines the watermarks of a subtask's input channels
// into its input watermark (Flink's StatusWatermarkValve). It is pure: the
// task loop feeds it events and applies its answers.
//
// The input watermark is the minimum over live channels: ended channels
// drop out, idle ones are excluded until they are active again, and a
// channel that comes back from idleness counts again only once its
// watermark has caught up with the input watermark (so the combined
// watermark never goes back). When every live channel is idle, the subtask
// is idle; when every channel ended, its watermark is MaxWatermark.
type WatermarkTracker struct {
	ch      []channelWM
	current int64 // the input watermark
	idle    bool  // every live channel is idle
}

type channelWM struct {
	wm      int64
	idle    bool
	aligned bool // active and caught up with current: counts for the minimum
	ended   bool
}

// WatermarkStep is what a tracker step changed, in the order the task
// carries it out: fire timers and forward the new watermark (Advanced),
// then forward the idleness change (Idle or Active).
type WatermarkStep struct {
	Advanced  bool
	Watermark int64 // the new input watermark, when Advanced
	Idle      bool  // the subtask became idle
	Active    bool  // the subtask became active again
}

// NewWatermarkTracker returns a tracker of channels inputs, each active
// without a watermark yet.
func NewWatermarkTracker(channels int) *WatermarkTracker {
	t := &WatermarkTracker{ch: make([]channelWM, channels), current: runtime.MinWatermark}
	for i := range t.ch {
		t.ch[i] = channelWM{wm: runtime.MinWatermark, aligned: true}
	}
	return t
}

// Current is the input watermark.
func (t *WatermarkTracker) Current() int64 { return t.current }

// Idle reports whether every live channel is idle.
func (t *WatermarkTracker) Idle() bool { return t.idle }

// OnWatermark handles watermark w from channel ch. A watermark implies the
// channel is active.
func (t *WatermarkTracker) OnWatermark(ch int, w int64) WatermarkStep {
	c := &t.ch[ch]
	if c.ended {
		return WatermarkStep{}
	}
	var step WatermarkStep
	if c.idle {
		c.idle = false
		step = t.activity()
	}
	if w > c.wm {
		c.wm = w
	}
	if c.wm >= t.current {
		c.aligned = true
	}
	return t.advance(step)
}

// OnIdle handles channel ch becoming idle (idle) or active again.
func (t *WatermarkTracker) OnIdle(ch int, idle bool) WatermarkStep {
	c := &t.ch[ch]
	if c.ended || c.idle == idle {
		return WatermarkStep{}
	}
	c.idle = idle
	c.aligned = !idle && c.wm >= t.current
	return t.advance(t.activity())
}

// OnEnd handles the end of channel ch: it no longer holds the watermark.
func (t *WatermarkTracker) OnEnd(ch int) WatermarkStep {
	c := &t.ch[ch]
	if c.ended {
		return WatermarkStep{}
	}
	c.ended, c.aligned = true, false
	return t.advance(t.activity())
}

// activity updates the subtask's idleness and says what changed.
func (t *WatermarkTracker) activity() WatermarkStep {
	idle, live := true, false
	for _, c := range t.ch {
		if !c.ended {
			live = true
			idle = idle && c.idle
		}
	}
	idle = idle && live
	if idle == t.idle {
		return WatermarkStep{}
	}
	t.idle = idle
	return WatermarkStep{Idle: idle, Active: !idle}
}

// advance recomputes the minimum over aligned channels into step.
func (t *WatermarkTracker) advance(step WatermarkStep) WatermarkStep {
	min, any, live := runtime.MaxWatermark, false, false
	for _, c := range t.ch {
		if c.ended {
			continue
		}
		live = true
		if c.aligned && !c.idle {
			any = true
			if c.wm < min {
				min = c.wm
			}
		}
	}
	if !any && live {
		return step // only idle or lagging channels: hold
	}
	if min > t.current {
		t.current = min
		step.Advanced, step.Watermark = true, min
	}
	return step
}
