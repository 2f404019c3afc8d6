package daemon

import (
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
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descState, descRestarts, descCompleted, descFailed, descInProgress,
		descLastDur, descLastSize, descRecordsIn, descRecordsOut, descOperatorGau, descInputWM, descOutputWM, descWMLag} {
		ch <- d
	}
	for _, d := range storageDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, info := range c.d.allInfo() {
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
		}
	}
}

// allInfo returns the info of every job that is active or in this daemon.
func (d *Daemon) allInfo() []api.JobInfo {
	entries := d.entries()
	out := make([]api.JobInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.info())
	}
	return out
}
