package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// historySize bounds the checkpoint history kept per job.
const historySize = 100

// trigger records a checkpoint or savepoint just started.
func (j *Job) trigger(info api.CheckpointInfo) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.status.counts.Triggered++
	j.upsert(info)
}

func (j *Job) upsert(info api.CheckpointInfo) {
	h := j.status.history
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].ID == info.ID {
			if info.TriggerTime.IsZero() {
				info.TriggerTime = h[i].TriggerTime
			}
			if info.Path == "" {
				info.Path = h[i].Path
			}
			h[i] = info
			return
		}
	}
	j.status.history = append(h, info)
	if len(j.status.history) > historySize {
		j.status.history = j.status.history[len(j.status.history)-historySize:]
	}
}

func (j *Job) complete(info api.CheckpointInfo, kind checkpoint.Kind) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.upsert(info)
	j.status.counts.Completed++
	j.status.streak.progress()
	j.status.durations = appendBounded(j.status.durations, info.DurationMs)
	j.status.sizes = appendBounded(j.status.sizes, info.Size)
	c := info
	for _, h := range j.status.history {
		if h.ID == info.ID {
			c = h
		}
	}
	switch {
	case kind == checkpoint.Periodic || (kind == checkpoint.Final && c.Path != ""):
		j.status.latest = &c
		j.status.resumeFrom = c.Path
	case kind.IsSavepoint():
		j.status.latestSP = &c
	}
}

func appendBounded(s []int64, v int64) []int64 {
	s = append(s, v)
	if len(s) > historySize {
		s = s[1:]
	}
	return s
}

func (j *Job) fail(id int64, kind checkpoint.Kind, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := api.CheckpointInfo{ID: id, Kind: kind.String(), Status: checkpoint.StatusFailed.String()}
	if err != nil {
		info.FailureReason = err.Error()
	}
	for _, h := range j.status.history {
		if h.ID == id {
			info.TriggerTime, info.Path = h.TriggerTime, h.Path
			info.DurationMs = time.Since(h.TriggerTime).Milliseconds()
		}
	}
	j.upsert(info)
	j.status.counts.Failed++
	c := info
	j.status.latestFailed = &c
}

func (j *Job) markDiscarded(id int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.status.history {
		if j.status.history[i].ID == id {
			j.status.history[i].Discarded = true
		}
	}
}

// Info returns the job's current figures.
func (j *Job) Info() api.JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := &j.status
	info := api.JobInfo{ID: j.id, Name: j.graph.Spec.Name, State: s.state, Error: s.err, File: j.graph.File,
		SubmitTime: s.submitTime, Restarts: s.restarts, Checkpointing: j.graph.Checkpointing,
		RestartStrategy: j.graph.Restart}
	if !s.endTime.IsZero() {
		t := s.endTime
		info.EndTime = &t
	}
	if !s.errTime.IsZero() {
		t := s.errTime
		info.ErrorTime = &t
	}
	s.streak.describe(&info)
	if s.restoredFrom != nil {
		info.RestoredFrom = s.restoredFrom.Path
	}
	counts := s.counts
	counts.InProgress = j.inProgress()
	info.Checkpoints = &counts
	if s.latest != nil {
		c := *s.latest
		c.Discarded = j.discarded(c.ID)
		info.LatestCheckpoint = &c
	}
	// A restore point deleted by delete-on-cancellation is no longer one.
	if s.restorePoint != nil && !j.discarded(s.restorePoint.ID) {
		info.RestorePoint, info.RestorePointID = s.restorePoint.Dir, s.restorePoint.ID
	}
	var live *figures
	if s.exec != nil {
		f := s.exec.totals()
		live = &f
	}
	for i, v := range j.graph.Vertices {
		oi := api.OperatorInfo{UID: v.Op.UID, Type: v.Op.Type, Parallelism: v.Parallelism,
			RecordsIn: s.baseIn[i], RecordsOut: s.baseOut[i]}
		if v.chainHead != nil {
			oi.ChainedTo = v.chainHead.Op.UID
		}
		for _, in := range v.Inputs {
			oi.Inputs = append(oi.Inputs, api.OperatorInput{UID: in.From.Op.UID, Partitioning: in.Part.String(), SideOutput: in.Side})
		}
		m := map[string]int64{}
		for k, val := range s.baseGauges[i] {
			m[k] = val
		}
		switch {
		case live != nil:
			live.watermarks(i, &oi)
		case s.lastFigures != nil:
			s.lastFigures.watermarks(i, &oi)
		}
		if live != nil {
			oi.RecordsIn += live.in[i]
			oi.RecordsOut += live.out[i]
			oi.Problems = live.problems[i]
			if live.texts != nil {
				oi.Texts = live.texts[i]
			}
			oi.Subtasks = live.subtasks[i]
			for k, val := range live.values[i] {
				if live.counters[k] {
					m[k] += val // the total of earlier attempts plus this one
				} else {
					m[k] = val
				}
			}
		}
		if len(m) > 0 {
			oi.Metrics = m
		}
		if live != nil && live.texts != nil {
			oi.Texts = live.texts[i]
		}
		info.Operators = append(info.Operators, oi)
	}
	return info
}

// discarded reports whether the history says a snapshot was deleted.
func (j *Job) discarded(id int64) bool {
	for _, h := range j.status.history {
		if h.ID == id {
			return h.Discarded
		}
	}
	return false
}

func (j *Job) inProgress() int {
	n := 0
	for _, h := range j.status.history {
		if h.Status == checkpoint.StatusInProgress.String() {
			n++
		}
	}
	return n
}

// Checkpoints returns the checkpoint history and counts.
func (j *Job) Checkpoints() api.CheckpointsInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := &j.status
	out := api.CheckpointsInfo{Counts: s.counts, History: append([]api.CheckpointInfo(nil), s.history...)}
	out.Counts.InProgress = j.inProgress()
	if s.latest != nil {
		c := *s.latest
		out.Latest.Completed = &c
	}
	if s.latestSP != nil {
		c := *s.latestSP
		out.Latest.Savepoint = &c
	}
	if s.latestFailed != nil {
		c := *s.latestFailed
		out.Latest.Failed = &c
	}
	if s.restoredFrom != nil {
		r := *s.restoredFrom
		out.Latest.Restored = &r
	}
	out.Summary.DurationMs = minAvgMax(s.durations)
	out.Summary.Size = minAvgMax(s.sizes)
	// newest first, as Flink's UI lists them
	for i, k := 0, len(out.History)-1; i < k; i, k = i+1, k-1 {
		out.History[i], out.History[k] = out.History[k], out.History[i]
	}
	return out
}

func minAvgMax(v []int64) api.MinAvgMax {
	if len(v) == 0 {
		return api.MinAvgMax{}
	}
	m := api.MinAvgMax{Min: v[0], Max: v[0]}
	var sum int64
	for _, x := range v {
		m.Min = min(m.Min, x)
		m.Max = max(m.Max, x)
		sum += x
	}
	m.Avg = sum / int64(len(v))
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	m.Median = sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		m.Median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return m
}

// figures are an execution's operator figures by vertex: gauges and
// counters summed over subtasks, and the subtasks' problems.
type figures struct {
	in, out  []int64
	values   []map[string]int64
	counters map[string]bool
	// inWM and outWM are the minimum watermarks over subtasks by vertex.
	inWM, outWM []int64
	problems    [][]string
	texts       []map[string][]string // by vertex, name, then subtask
	subtasks    [][]api.SubtaskInfo
}

// watermarks fills the event-time figures of vertex i (none before its
// first watermark).
func (f *figures) watermarks(i int, oi *api.OperatorInfo) {
	oi.InputWatermark, oi.OutputWatermark, oi.WatermarkLagMs = watermarkFigures(f.inWM[i], f.outWM[i], time.Now())
}

// totals sums the records and gauges of an execution's subtasks by vertex.
func (e *execution) totals() figures {
	n := len(e.g.Vertices)
	f := figures{in: make([]int64, n), out: make([]int64, n), values: make([]map[string]int64, n), counters: map[string]bool{},
		inWM: make([]int64, n), outWM: make([]int64, n), problems: make([][]string, n), subtasks: make([][]api.SubtaskInfo, n)}
	for i := range f.inWM {
		f.inWM[i], f.outWM[i] = runtime.MaxWatermark, runtime.MaxWatermark
	}
	wall := time.Now()
	for _, t := range e.tasks {
		i := t.v.Index
		f.subtasks[i] = append(f.subtasks[i], t.info(wall))
		f.inWM[i] = min(f.inWM[i], t.clock.inWM.Load())
		f.outWM[i] = min(f.outWM[i], t.clock.outWM.Load())
		for _, p := range t.gauges.Problems() {
			f.problems[i] = append(f.problems[i], fmt.Sprintf("subtask %d: %s", t.index, p))
		}
		f.in[i] += t.recordsIn.Load()
		f.out[i] += t.recordsOut.Load()
		values, counters := t.gauges.Snapshot()
		for k, v := range values {
			if f.values[i] == nil {
				f.values[i] = map[string]int64{}
			}
			f.values[i][k] += v
		}
		for k := range counters {
			f.counters[k] = true
		}
		for k, v := range t.gauges.Texts() {
			f.addText(i, t.index, t.v.Parallelism, k, v)
		}
	}
	return f
}

func (f *figures) addText(vertex, subtask, parallelism int, name, v string) {
	if f.texts == nil {
		f.texts = make([]map[string][]string, len(f.in))
	}
	if f.texts[vertex] == nil {
		f.texts[vertex] = map[string][]string{}
	}
	if f.texts[vertex][name] == nil {
		f.texts[vertex][name] = make([]string, parallelism)
	}
	f.texts[vertex][name][subtask] = v
}
