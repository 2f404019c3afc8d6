package engine

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// clock is a subtask's event and processing time: the watermarks it
// receives or generates, and the timers of its keyed state. Only the
// subtask's goroutine touches it, but the watermark figures, read by info.
type clock struct {
	tracker *WatermarkTracker // input watermarks (every subtask with inputs)

	// Sources with event time.
	et        *eventTime
	gen       *SourceWatermarks
	splitter  runtime.SplitSource
	declared  DeclaredWatermarks // the source declares watermarks (nil: it does not)
	splits    []uint32
	interval  time.Duration
	lastEmit  time.Time
	sentWM    int64
	sentIdle  bool
	bad       *atomic.Int64 // records skipped for their timestamp
	idleGauge *atomic.Int64

	// Operators with keyed state that take timers.
	timers   *timerService
	listener runtime.TimerListener
	procWake *time.Timer
	// wmListener hears every advance of the input watermark (nil: the
	// operator is no WatermarkListener).
	wmListener runtime.WatermarkListener
	heardWM    int64 // the last watermark wmListener heard

	inWM, outWM atomic.Int64 // for info; MinWatermark before the first
}

// Metric names the engine publishes among an operator's own figures.
const (
	metricBadTimestamps = "numRecordsWithBadTimestampSkipped"
	metricIdleSplits    = "idleSplits"
	metricTimers        = "timers"
)

// setUpTime prepares the subtask's clock after its state was restored and
// before Open: the timer service (for an operator with keyed state that is
// a TimerListener) and, for a source with event time, the watermark
// generator.
func (t *subtask) setUpTime() error {
	c := &t.clock
	c.sentWM = runtime.MinWatermark
	if t.src == nil {
		c.tracker = NewWatermarkTracker(t.gate.NumChannels())
	}
	if l, ok := t.op.(runtime.TimerListener); ok && t.keyed != nil {
		ts, err := newTimerService(t.keyed)
		if err != nil {
			return err
		}
		c.timers, c.listener = ts, l
		t.gauges.Gauge(metricTimers).Store(int64(ts.len()))
	}
	if t.src == nil {
		c.wmListener, _ = t.op.(runtime.WatermarkListener)
		c.heardWM = runtime.MinWatermark
	}
	if t.src != nil && t.v.eventTime != nil {
		c.et = t.v.eventTime.forSubtask()
		c.gen = NewSourceWatermarks(c.et.bound, c.et.idle, c.et.advanceWhenIdle)
		c.interval = t.exec.g.Spec.WatermarkEvery()
		c.bad = t.gauges.Counter(metricBadTimestamps)
		c.idleGauge = t.gauges.Gauge(metricIdleSplits)
		c.splitter, _ = t.src.(runtime.SplitSource)
		c.declared, _ = t.src.(DeclaredWatermarks)
	}
	return nil
}

// currentWatermark is the operator's input watermark (Context.CurrentWatermark).
func (t *subtask) currentWatermark() int64 {
	if t.clock.tracker == nil {
		return t.clock.outWM.Load()
	}
	return t.clock.tracker.Current()
}

// refreshSplits asks a splitting source which splits it reads now.
func (t *subtask) refreshSplits(now time.Time) {
	c := &t.clock
	if c.splitter == nil {
		if len(c.splits) == 0 {
			c.splits = append(c.splits, 0)
			c.gen.SetSplits(c.splits, now.UnixMilli())
		}
		return
	}
	c.splits = c.splitter.Splits(c.splits[:0])
	c.gen.SetSplits(c.splits, now.UnixMilli())
}

// stampRecords gives the records of a polled batch their event time and
// feeds the watermark generator. A record whose timestamp cannot be read
// fails the source, naming it, or is skipped and counted when the source's
// decode-error policy skips.
func (t *subtask) stampRecords(b *runtime.Batch, now time.Time) error {
	c := &t.clock
	ms := now.UnixMilli()
	kept := 0 // records before kept stay; a bad one skipped moves the rest up
	for i := range b.Records {
		r := &b.Records[i]
		if err := c.et.stamp(r); err != nil {
			if !c.et.skipBad {
				return fmt.Errorf("record %s of split %d: %w", quote(r.Value), r.Split, err)
			}
			c.bad.Add(1)
			continue
		}
		c.gen.Observe(r.Split, r.Timestamp, ms)
		if kept != i {
			b.Records[kept] = *r
		}
		kept++
	}
	clear(b.Records[kept:])
	b.Records = b.Records[:kept]
	return nil
}

// quote shows a record's value in an error, cut to a readable length.
func quote(v []byte) string {
	if len(v) > 120 {
		return fmt.Sprintf("%q…", v[:120])
	}
	return fmt.Sprintf("%q", v)
}

// DeclaredWatermarks is a source that declares watermarks itself, besides
// those its records' timestamps generate: flinkgo test's in-memory
// sources (a test's watermark entries). The engine takes its watermark
// after every Poll instead of every watermark interval, so the watermark
// follows each record as its timestamp and the bound make it, whatever the
// wall clock: a run is the same every time.
type DeclaredWatermarks interface {
	// DeclaredWatermark returns the watermark the source declared in its
	// last Poll (ok false: none); the subtask's watermark is at least it
	// from then on.
	DeclaredWatermark() (wm int64, ok bool)
}

// sourceWatermark sends the source's watermark downstream when the
// interval passed (after every Poll, for a source that declares
// watermarks) and it changed (or the subtask's idleness did).
func (t *subtask) sourceWatermark(now time.Time) error {
	c := &t.clock
	if c.gen == nil {
		return nil
	}
	if c.declared != nil {
		if w, ok := c.declared.DeclaredWatermark(); ok {
			c.gen.Raise(w)
		}
	} else if now.Sub(c.lastEmit) < c.interval {
		return nil
	}
	c.lastEmit = now
	t.refreshSplits(now)
	ms := now.UnixMilli()
	c.idleGauge.Store(int64(c.gen.IdleSplits(ms)))
	wm, idle := c.gen.Watermark(ms)
	switch {
	case idle && !c.sentIdle:
		c.sentIdle = true
		return t.out.Broadcast(Event{Kind: EventWatermark, Idle: true})
	case !idle && (c.sentIdle || wm > c.sentWM):
		c.sentIdle, c.sentWM = false, wm
		c.inWM.Store(wm)
		c.outWM.Store(wm)
		return t.out.Broadcast(Event{Kind: EventWatermark, Watermark: wm})
	}
	return nil
}

// onWatermarkEvent handles a watermark or idleness event from channel ch.
func (t *subtask) onWatermarkEvent(ev Event, ch int) error {
	if ev.Idle {
		return t.applyWatermark(t.clock.tracker.OnIdle(ch, true))
	}
	return t.applyWatermark(t.clock.tracker.OnWatermark(ch, ev.Watermark))
}

// applyWatermark carries out a tracker step: fire the event-time timers the
// new watermark passed, then send it on; then send on a change of idleness.
func (t *subtask) applyWatermark(s WatermarkStep) error {
	if s.Advanced {
		if err := t.advanceWatermark(s.Watermark); err != nil {
			return err
		}
	}
	switch {
	case s.Idle:
		return t.out.Broadcast(Event{Kind: EventWatermark, Idle: true})
	case s.Active:
		return t.out.Broadcast(Event{Kind: EventWatermark, Watermark: t.clock.outWM.Load()})
	}
	return nil
}

// advanceWatermark fires the event-time timers at or before w and sends w
// downstream: records the timers emit go before it.
func (t *subtask) advanceWatermark(w int64) error {
	c := &t.clock
	if w <= c.outWM.Load() {
		return nil
	}
	c.inWM.Store(w)
	if err := t.fireTimers(runtime.EventTime, w); err != nil {
		return err
	}
	c.outWM.Store(w)
	return t.out.Broadcast(Event{Kind: EventWatermark, Watermark: w})
}

// fireTimers fires the timers of domain d at or before limit; for event
// time, the operator then hears of the watermark (WatermarkListener).
func (t *subtask) fireTimers(d runtime.TimeDomain, limit int64) error {
	c := &t.clock
	out := t.sinkOrOutput()
	if c.timers != nil {
		// A timer that fails is a record failure (TimerFailure): the same
		// timer failing again after the restart is a poison record.
		err := c.timers.fire(d, limit, func(ts int64) error {
			return runtime.TimerFailure(t.ctx, d, ts, c.listener.OnTimer(ts, d, out))
		})
		t.gauges.Gauge(metricTimers).Store(int64(c.timers.len()))
		if err != nil {
			if _, named := runtime.AsRecordFailure(err); named {
				return err // it names the timer
			}
			return fmt.Errorf("%s timer: %w", d, err)
		}
	}
	if d == runtime.EventTime && c.wmListener != nil && limit > c.heardWM {
		c.heardWM = limit // the end of input passes MaxWatermark once more
		if err := c.wmListener.OnWatermark(limit, out); err != nil {
			return fmt.Errorf("watermark %d: %w", limit, err)
		}
	}
	return t.out.Err()
}

// sinkOrOutput is what the operator emits to: nil for a sink.
func (t *subtask) sinkOrOutput() runtime.Output {
	if len(t.out.edges) == 0 {
		return nil
	}
	return t.out
}

// processingTimers fires the processing-time timers that are due and
// returns the channel that wakes the subtask at the next one (nil: none).
func (t *subtask) processingTimers(now time.Time) (<-chan time.Time, error) {
	c := &t.clock
	if c.timers == nil {
		return nil, nil
	}
	if err := t.fireTimers(runtime.ProcessingTime, now.UnixMilli()); err != nil {
		return nil, err
	}
	next, ok := c.timers.nextProcessing()
	if !ok {
		return nil, nil
	}
	d := time.Until(time.UnixMilli(next))
	if c.procWake == nil {
		c.procWake = time.NewTimer(d)
	} else {
		if !c.procWake.Stop() {
			select {
			case <-c.procWake.C:
			default:
			}
		}
		c.procWake.Reset(d)
	}
	return c.procWake.C, nil
}

// stopTime releases the clock's timer.
func (t *subtask) stopTime() {
	if t.clock.procWake != nil {
		t.clock.procWake.Stop()
	}
}
