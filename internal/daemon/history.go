package daemon

import (
	"math"
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// The daemon samples every job once a second and keeps the last 15
// minutes, so a dashboard opened now shows how the job got here.
const (
	sampleEvery   = time.Second
	historySpan   = 15 * time.Minute
	historyPoints = int(historySpan / sampleEvery)
	// historyCheckpoints bounds the checkpoints kept for the chart (at
	// the shortest intervals, fewer than 15 minutes' worth).
	historyCheckpoints = 512
	// The overview's sparkline: 60 points of 5 samples.
	sparkPoints = 60
	sparkStep   = 5
)

// history is one job's sampled figures: rings that grow with the samples
// up to a fixed size, so a job that runs for days holds what one that ran
// for 15 minutes does (about 46 KB a job and 16 KB an operator) and a job
// that ran for a second holds a few hundred bytes (compact trims what
// growth over-allocated once the job ended). While a ring grows its head
// is 0, so the ring arithmetic below holds in both phases. Not safe for
// concurrent use.
type history struct {
	head, n       int // the ring over times, jobIn, jobOut and ops' series
	times         []int64
	jobIn, jobOut []float32
	ops           []opSeries

	cpHead, cpN int
	cps         []api.CheckpointPoint
}

// opSeries are one operator's series; lag is NaN before its first
// watermark.
type opSeries struct {
	uid            string
	in, out        []float32
	busy, bp, idle []int16
	lag            []float32
	eventTime      bool
}

func newHistory(info *api.JobInfo) *history {
	h := &history{}
	for _, op := range info.Operators {
		h.ops = append(h.ops, opSeries{uid: op.UID})
	}
	return h
}

// slot returns the index the next of n samples goes to in a ring of the
// given size, growing s by one while it is shorter (doubling its capacity,
// never past size).
func slot[T any](s *[]T, n, head, size int) int {
	if len(*s) < size {
		if len(*s) == cap(*s) {
			grown := make([]T, len(*s), min(max(2*cap(*s), 16), size))
			copy(grown, *s)
			*s = grown
		}
		*s = append(*s, *new(T))
		return len(*s) - 1
	}
	return (head + n) % size
}

// compact trims the rings to the samples they hold, for a job that ended
// before they grew to their full size (append leaves up to twice that).
func (h *history) compact() {
	if h.n < historyPoints {
		h.times, h.jobIn, h.jobOut = slices.Clone(h.times), slices.Clone(h.jobIn), slices.Clone(h.jobOut)
		for k := range h.ops {
			s := &h.ops[k]
			s.in, s.out, s.lag = slices.Clone(s.in), slices.Clone(s.out), slices.Clone(s.lag)
			s.busy, s.bp, s.idle = slices.Clone(s.busy), slices.Clone(s.bp), slices.Clone(s.idle)
		}
	}
	if h.cpN < historyCheckpoints {
		h.cps = slices.Clone(h.cps)
	}
}

// add records a sample of info, whose rates are filled in.
func (h *history) add(at time.Time, info *api.JobInfo) {
	if len(info.Operators) != len(h.ops) {
		return // a job's graph does not change (a bug otherwise)
	}
	i := slot(&h.times, h.n, h.head, historyPoints)
	slot(&h.jobIn, h.n, h.head, historyPoints)
	slot(&h.jobOut, h.n, h.head, historyPoints)
	for k := range h.ops {
		s := &h.ops[k]
		slot(&s.in, h.n, h.head, historyPoints)
		slot(&s.out, h.n, h.head, historyPoints)
		slot(&s.busy, h.n, h.head, historyPoints)
		slot(&s.bp, h.n, h.head, historyPoints)
		slot(&s.idle, h.n, h.head, historyPoints)
		slot(&s.lag, h.n, h.head, historyPoints)
	}
	if h.n == historyPoints {
		h.head = (h.head + 1) % historyPoints
	} else {
		h.n++
	}
	in, out := jobRates(info)
	h.times[i], h.jobIn[i], h.jobOut[i] = at.UnixMilli(), float32(in), float32(out)
	for k := range h.ops {
		s, op := &h.ops[k], &info.Operators[k]
		s.in[i], s.out[i] = float32(op.RecordsInPerSec), float32(op.RecordsOutPerSec)
		s.busy[i], s.bp[i], s.idle[i] = int16(op.BusyTimeMsPerSecond), int16(op.BackPressuredTimeMsPerSecond), int16(op.IdleTimeMsPerSecond)
		s.lag[i] = float32(math.NaN())
		if op.WatermarkLagMs != nil {
			s.lag[i], s.eventTime = float32(*op.WatermarkLagMs), true
		}
	}
}

// addCheckpoint records a finished checkpoint.
func (h *history) addCheckpoint(p api.CheckpointPoint) {
	i := slot(&h.cps, h.cpN, h.cpHead, historyCheckpoints)
	if h.cpN == historyCheckpoints {
		h.cpHead = (h.cpHead + 1) % historyCheckpoints
	} else {
		h.cpN++
	}
	h.cps[i] = p
}

// newest is the time of the latest sample (zero when none).
func (h *history) newest() time.Time {
	if h.n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(h.times[(h.head+h.n-1)%historyPoints])
}

// since returns the samples and checkpoints after since (ms since the
// epoch) that are within historySpan of the newest sample.
func (h *history) since(since int64) api.JobHistory {
	out := api.JobHistory{StepMs: sampleEvery.Milliseconds(), SpanMs: historySpan.Milliseconds(), Times: []int64{},
		RecordsInPerSec: []float64{}, RecordsOutPerSec: []float64{}, Operators: []api.OperatorHistory{}, Checkpoints: []api.CheckpointPoint{}}
	if h.n > 0 {
		since = max(since, h.newest().Add(-historySpan).UnixMilli())
	}
	var idx []int
	for k := 0; k < h.n; k++ {
		if i := (h.head + k) % historyPoints; h.times[i] > since {
			idx = append(idx, i)
		}
	}
	for _, i := range idx {
		out.Times = append(out.Times, h.times[i])
		out.RecordsInPerSec = append(out.RecordsInPerSec, round1(h.jobIn[i]))
		out.RecordsOutPerSec = append(out.RecordsOutPerSec, round1(h.jobOut[i]))
	}
	for _, s := range h.ops {
		oh := api.OperatorHistory{UID: s.uid, RecordsInPerSec: make([]float64, 0, len(idx)), RecordsOutPerSec: make([]float64, 0, len(idx)),
			BusyTimeMsPerSecond: make([]int64, 0, len(idx)), BackPressuredTimeMsPerSecond: make([]int64, 0, len(idx)), IdleTimeMsPerSecond: make([]int64, 0, len(idx))}
		for _, i := range idx {
			oh.RecordsInPerSec = append(oh.RecordsInPerSec, round1(s.in[i]))
			oh.RecordsOutPerSec = append(oh.RecordsOutPerSec, round1(s.out[i]))
			oh.BusyTimeMsPerSecond = append(oh.BusyTimeMsPerSecond, int64(s.busy[i]))
			oh.BackPressuredTimeMsPerSecond = append(oh.BackPressuredTimeMsPerSecond, int64(s.bp[i]))
			oh.IdleTimeMsPerSecond = append(oh.IdleTimeMsPerSecond, int64(s.idle[i]))
			if s.eventTime {
				var p *int64
				if v := s.lag[i]; !math.IsNaN(float64(v)) {
					ms := int64(v)
					p = &ms
				}
				oh.WatermarkLagMs = append(oh.WatermarkLagMs, p)
			}
		}
		out.Operators = append(out.Operators, oh)
	}
	for k := 0; k < h.cpN; k++ {
		if p := h.cps[(h.cpHead+k)%historyCheckpoints]; p.Time > since {
			out.Checkpoints = append(out.Checkpoints, p)
		}
	}
	return out
}

// sparkline is the job's records in per second over the last
// sparkPoints × sparkStep samples, sparkStep samples to a point.
func (h *history) sparkline() []float64 {
	n := min(h.n, sparkPoints*sparkStep)
	out := make([]float64, 0, (n+sparkStep-1)/sparkStep)
	// Points end at the newest sample; the oldest may have fewer samples.
	for end := n; end > 0; end -= sparkStep {
		start := max(0, end-sparkStep)
		var sum float64
		for k := start; k < end; k++ {
			sum += float64(h.jobIn[(h.head+h.n-n+k)%historyPoints])
		}
		out = append(out, round1(float32(sum/float64(end-start))))
	}
	for i, k := 0, len(out)-1; i < k; i, k = i+1, k-1 {
		out[i], out[k] = out[k], out[i]
	}
	return out
}

func round1(v float32) float64 { return math.Round(float64(v)*10) / 10 }

// History returns a job's sampled history after since (ms since the epoch).
func (d *Daemon) History(ref string, since int64) (*api.JobHistory, error) {
	e, err := d.lookup(ref)
	if err != nil {
		return nil, err
	}
	if (e.job == nil || !e.job.State().Active()) && e.live.wantsHistory() {
		d.loadHistory(e)
	}
	h := e.live.historySince(since, time.Now())
	return &h, nil
}

// loadHistory reads back the history of a job that does not run here (any
// more), from its directory: an ended job's charts after a daemon restart,
// or after expire dropped them from memory.
func (d *Daemon) loadHistory(e *entry) {
	h, err := d.reg.loadHistory(e.rec.ID)
	if err != nil {
		d.log.Warn().Err(err).Str("job", e.rec.ID).Msg("the job's charts from before are unreadable and not shown")
	}
	e.live.loaded(h)
}

// Exceptions returns a job's exception history (GET /v1/jobs/{id}/exceptions).
func (d *Daemon) Exceptions(ref string) (*api.JobExceptions, error) {
	e, err := d.lookup(ref)
	if err != nil {
		return nil, err
	}
	x := e.live.exceptions()
	return &x, nil
}
