package daemon

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// collector exports the jobs' figures with Flink's metric meanings.
type collector struct{ d *Daemon }

var (
	jobLabels = []string{"job_id", "job_name"}
	opLabels  = []string{"job_id", "job_name", "operator", "type"}

	descState       = prometheus.NewDesc("flinkgo_job_state", "1 for the job's current state.", append(jobLabels, "state"), nil)
	descRestarts    = prometheus.NewDesc("flinkgo_job_num_restarts", "Restarts of the job (Flink numRestarts).", jobLabels, nil)
	descCompleted   = prometheus.NewDesc("flinkgo_job_number_of_completed_checkpoints", "Completed checkpoints (Flink numberOfCompletedCheckpoints).", jobLabels, nil)
	descFailed      = prometheus.NewDesc("flinkgo_job_number_of_failed_checkpoints", "Failed checkpoints (Flink numberOfFailedCheckpoints).", jobLabels, nil)
	descInProgress  = prometheus.NewDesc("flinkgo_job_number_of_in_progress_checkpoints", "Checkpoints in progress.", jobLabels, nil)
	descLastDur     = prometheus.NewDesc("flinkgo_job_last_checkpoint_duration_ms", "Duration of the last completed checkpoint (Flink lastCheckpointDuration).", jobLabels, nil)
	descLastSize    = prometheus.NewDesc("flinkgo_job_last_checkpoint_size_bytes", "State size of the last completed checkpoint (Flink lastCheckpointSize).", jobLabels, nil)
	descRecordsIn   = prometheus.NewDesc("flinkgo_operator_records_in_total", "Records received by the operator's subtasks (Flink numRecordsIn).", opLabels, nil)
	descRecordsOut  = prometheus.NewDesc("flinkgo_operator_records_out_total", "Records emitted by the operator's subtasks (Flink numRecordsOut).", opLabels, nil)
	descOperatorGau = prometheus.NewDesc("flinkgo_operator_metric", "An operator's own figures (pending acks, skipped records, ...).", append(opLabels, "metric"), nil)
	descInputWM     = prometheus.NewDesc("flinkgo_operator_current_input_watermark", "The minimum input watermark over the operator's subtasks, ms since the epoch (Flink currentInputWatermark).", opLabels, nil)
	descOutputWM    = prometheus.NewDesc("flinkgo_operator_current_output_watermark", "The minimum output watermark over the operator's subtasks, ms since the epoch (Flink currentOutputWatermark).", opLabels, nil)
	descWMLag       = prometheus.NewDesc("flinkgo_operator_watermark_lag_milliseconds", "How far the operator's output watermark is behind the wall clock.", opLabels, nil)

	// Where the time goes, per operator (the largest over its subtasks,
	// as Flink's job graph shows it) and per subtask (Flink's task metrics).
	taskLabels    = append(append([]string{}, opLabels...), "subtask")
	descOpBusy    = prometheus.NewDesc("flinkgo_operator_busy_time_ms_per_second", "The largest busyTimeMsPerSecond over the operator's subtasks.", opLabels, nil)
	descOpBP      = prometheus.NewDesc("flinkgo_operator_back_pressured_time_ms_per_second", "The largest backPressuredTimeMsPerSecond over the operator's subtasks: time waiting for room in a full output channel.", opLabels, nil)
	descOpIdle    = prometheus.NewDesc("flinkgo_operator_idle_time_ms_per_second", "The largest idleTimeMsPerSecond over the operator's subtasks: time waiting for input.", opLabels, nil)
	descTaskBusy  = prometheus.NewDesc("flinkgo_task_busy_time_ms_per_second", "Time the subtask was busy over the last second (Flink busyTimeMsPerSecond).", taskLabels, nil)
	descTaskBP    = prometheus.NewDesc("flinkgo_task_back_pressured_time_ms_per_second", "Time the subtask waited for room in a full output channel over the last second (Flink backPressuredTimeMsPerSecond).", taskLabels, nil)
	descTaskIdle  = prometheus.NewDesc("flinkgo_task_idle_time_ms_per_second", "Time the subtask waited for input over the last second (Flink idleTimeMsPerSecond).", taskLabels, nil)
	descTaskAccum = prometheus.NewDesc("flinkgo_task_accumulated_time_ms_total", "Time since the subtask started, by what it did: busy, backpressured or idle (Flink accumulateBusyTimeMs, ...).", append(append([]string{}, taskLabels...), "time"), nil)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descState, descRestarts, descCompleted, descFailed, descInProgress,
		descLastDur, descLastSize, descRecordsIn, descRecordsOut, descOperatorGau, descInputWM, descOutputWM, descWMLag,
		descOpBusy, descOpBP, descOpIdle, descTaskBusy, descTaskBP, descTaskIdle, descTaskAccum} {
		ch <- d
	}
	for _, d := range storageDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, info := range c.d.allInfo() {
		if !info.State.Active() {
			// An ended job's series go with it, as Flink removes a
			// job's metric group when it ends: a daemon that ran
			// thousands of short jobs serves the running ones only.
			continue
		}
		jl := []string{info.ID, info.Name}
		ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, 1, append(jl, string(info.State))...)
		ch <- prometheus.MustNewConstMetric(descRestarts, prometheus.CounterValue, float64(info.Restarts), jl...)
		collectStorage(ch, info, jl)
		if cp := info.Checkpoints; cp != nil {
			ch <- prometheus.MustNewConstMetric(descCompleted, prometheus.CounterValue, float64(cp.Completed), jl...)
			ch <- prometheus.MustNewConstMetric(descFailed, prometheus.CounterValue, float64(cp.Failed), jl...)
			ch <- prometheus.MustNewConstMetric(descInProgress, prometheus.GaugeValue, float64(cp.InProgress), jl...)
		}
		if l := info.LatestCheckpoint; l != nil {
			ch <- prometheus.MustNewConstMetric(descLastDur, prometheus.GaugeValue, float64(l.DurationMs), jl...)
			ch <- prometheus.MustNewConstMetric(descLastSize, prometheus.GaugeValue, float64(l.Size), jl...)
		}
		for _, op := range info.Operators {
			ol := append(append([]string{}, jl...), op.UID, op.Type)
			ch <- prometheus.MustNewConstMetric(descRecordsIn, prometheus.CounterValue, float64(op.RecordsIn), ol...)
			ch <- prometheus.MustNewConstMetric(descRecordsOut, prometheus.CounterValue, float64(op.RecordsOut), ol...)
			if w := op.InputWatermark; w != nil && *w != runtime.MaxWatermark {
				ch <- prometheus.MustNewConstMetric(descInputWM, prometheus.GaugeValue, float64(*w), ol...)
			}
			if w := op.OutputWatermark; w != nil && *w != runtime.MaxWatermark {
				ch <- prometheus.MustNewConstMetric(descOutputWM, prometheus.GaugeValue, float64(*w), ol...)
			}
			if l := op.WatermarkLagMs; l != nil {
				ch <- prometheus.MustNewConstMetric(descWMLag, prometheus.GaugeValue, float64(*l), ol...)
			}
			for name, v := range op.Metrics {
				ch <- prometheus.MustNewConstMetric(descOperatorGau, prometheus.GaugeValue, float64(v), append(append([]string{}, ol...), name)...)
			}
			collectTimes(ch, op, ol)
		}
	}
}

// allInfo returns the info of every job that is active or in this daemon.
func (d *Daemon) allInfo() []api.JobInfo {
	entries := d.entries()
	out := make([]api.JobInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, d.liveInfo(e))
	}
	return out
}

// collectTimes exports where an operator's subtasks spend their time.
func collectTimes(ch chan<- prometheus.Metric, op api.OperatorInfo, ol []string) {
	gauge := func(d *prometheus.Desc, v int64, labels []string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	gauge(descOpBusy, op.BusyTimeMsPerSecond, ol)
	gauge(descOpBP, op.BackPressuredTimeMsPerSecond, ol)
	gauge(descOpIdle, op.IdleTimeMsPerSecond, ol)
	for _, s := range op.Subtasks {
		tl := append(append([]string{}, ol...), strconv.Itoa(s.Index))
		gauge(descTaskBusy, s.BusyTimeMsPerSecond, tl)
		gauge(descTaskBP, s.BackPressuredTimeMsPerSecond, tl)
		gauge(descTaskIdle, s.IdleTimeMsPerSecond, tl)
		for kind, v := range map[string]int64{"busy": s.AccumulatedBusyTimeMs, "backpressured": s.AccumulatedBackPressuredTimeMs, "idle": s.AccumulatedIdleTimeMs} {
			ch <- prometheus.MustNewConstMetric(descTaskAccum, prometheus.CounterValue, float64(v), append(append([]string{}, tl...), kind)...)
		}
	}
}
