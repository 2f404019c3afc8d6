package daemon

import (
	"math"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// counters are a job's cumulative figures at one instant: what a sample
// reads. Rates and shares of time are the difference of two.
type counters struct {
	at  time.Time
	ops []opCounters
}

type opCounters struct {
	uid      string
	in, out  int64
	subtasks []subCounters
}

type subCounters struct {
	in, out        int64
	busy, bp, idle int64 // accumulated ms
}

func countersOf(info *api.JobInfo, at time.Time) counters {
	c := counters{at: at, ops: make([]opCounters, len(info.Operators))}
	for i, op := range info.Operators {
		oc := opCounters{uid: op.UID, in: op.RecordsIn, out: op.RecordsOut, subtasks: make([]subCounters, len(op.Subtasks))}
		for k, s := range op.Subtasks {
			oc.subtasks[k] = subCounters{in: s.RecordsIn, out: s.RecordsOut, busy: s.AccumulatedBusyTimeMs,
				bp: s.AccumulatedBackPressuredTimeMs, idle: s.AccumulatedIdleTimeMs}
		}
		c.ops[i] = oc
	}
	return c
}

// rates are the per-second figures between two samples.
type rates struct {
	ops []opRates
}

type opRates struct {
	in, out float64
	// shares of time in ms per second, the maximum over subtasks
	busy, bp, idle int64
	subtasks       []subRates
}

type subRates struct {
	in, out        float64
	busy, bp, idle int64
}

// ratesBetween computes the figures from prev to cur. A counter that went
// down (a restart began a new attempt) gives zero rates, not negative
// ones; a subtask's times count only when all three grew.
func ratesBetween(prev, cur counters) rates {
	dt := cur.at.Sub(prev.at).Seconds()
	r := rates{ops: make([]opRates, len(cur.ops))}
	if dt <= 0 || len(prev.ops) != len(cur.ops) {
		return r
	}
	for i, c := range cur.ops {
		p := prev.ops[i]
		or := opRates{in: perSec(c.in-p.in, dt), out: perSec(c.out-p.out, dt), subtasks: make([]subRates, len(c.subtasks))}
		for k, s := range c.subtasks {
			if len(p.subtasks) != len(c.subtasks) {
				break
			}
			ps := p.subtasks[k]
			sr := subRates{in: perSec(s.in-ps.in, dt), out: perSec(s.out-ps.out, dt)}
			sr.busy, sr.bp, sr.idle = shares(s.busy-ps.busy, s.bp-ps.bp, s.idle-ps.idle)
			or.busy, or.bp, or.idle = max(or.busy, sr.busy), max(or.bp, sr.bp), max(or.idle, sr.idle)
			or.subtasks[k] = sr
		}
		r.ops[i] = or
	}
	return r
}

func perSec(d int64, dt float64) float64 { return max(0, float64(d)/dt) }

// shares turns the growth of a subtask's busy, backpressured and idle time
// into ms per second; they add up to 1000 (up to rounding). A figure that
// went down counts as no growth: by a moment, when time moved between two
// of them as a wait began or ended; by everything, when a restart began
// the subtask anew (then all three did, and there is no share).
func shares(busy, bp, idle int64) (int64, int64, int64) {
	busy, bp, idle = max(busy, 0), max(bp, 0), max(idle, 0)
	total := busy + bp + idle
	if total <= 0 {
		return 0, 0, 0
	}
	per := func(x int64) int64 { return int64(math.Round(float64(x) * 1000 / float64(total))) }
	return per(busy), per(bp), per(idle)
}

// apply fills info's rates and shares of time from r, matched by operator
// uid and subtask index; a job that is not active moves nothing.
func (r *rates) apply(info *api.JobInfo) {
	if r == nil || !info.State.Active() || len(r.ops) != len(info.Operators) {
		return
	}
	for i := range info.Operators {
		op, or := &info.Operators[i], r.ops[i]
		op.RecordsInPerSec, op.RecordsOutPerSec = or.in, or.out
		op.BusyTimeMsPerSecond, op.BackPressuredTimeMsPerSecond, op.IdleTimeMsPerSecond = or.busy, or.bp, or.idle
		for k := range op.Subtasks {
			if k >= len(or.subtasks) {
				break
			}
			s, sr := &op.Subtasks[k], or.subtasks[k]
			s.RecordsInPerSec, s.RecordsOutPerSec = sr.in, sr.out
			s.BusyTimeMsPerSecond, s.BackPressuredTimeMsPerSecond, s.IdleTimeMsPerSecond = sr.busy, sr.bp, sr.idle
		}
	}
}

// recorded is info as the registry keeps it: without the running
// attempt's subtasks, which mean nothing once it ended.
func recorded(info api.JobInfo) api.JobInfo {
	ops := make([]api.OperatorInfo, len(info.Operators))
	for i, op := range info.Operators {
		op.Subtasks = nil
		ops[i] = op
	}
	info.Operators = ops
	return info
}

// jobRates are the records entering a job at its sources and leaving it at
// its sinks (the operators no other operator reads from), per second.
func jobRates(info *api.JobInfo) (in, out float64) {
	read := map[string]bool{}
	for _, op := range info.Operators {
		for _, i := range op.Inputs {
			read[i.UID] = true
		}
	}
	for _, op := range info.Operators {
		if len(op.Inputs) == 0 {
			in += op.RecordsOutPerSec
		}
		if !read[op.UID] {
			out += op.RecordsInPerSec
		}
	}
	return in, out
}
