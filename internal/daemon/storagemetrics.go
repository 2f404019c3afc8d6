package daemon

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Object storage costs per job (docs/object-storage.md): what the job
// asked of S3 in this daemon, and what its last completed checkpoint did.
var (
	descStorageRequests = prometheus.NewDesc("flinkgo_job_storage_requests_total", "Requests the job made to object storage (checkpoints, savepoints, file sinks).", jobLabels, nil)
	descStorageFailed   = prometheus.NewDesc("flinkgo_job_storage_failed_requests_total", "Object storage requests that failed after their retries.", jobLabels, nil)
	descStorageUp       = prometheus.NewDesc("flinkgo_job_storage_bytes_uploaded_total", "Bytes the job uploaded to object storage.", jobLabels, nil)
	descStorageDown     = prometheus.NewDesc("flinkgo_job_storage_bytes_downloaded_total", "Bytes the job downloaded from object storage (restores).", jobLabels, nil)
	descLastRequests    = prometheus.NewDesc("flinkgo_job_last_checkpoint_storage_requests", "Object storage requests of the last completed checkpoint (state objects and _metadata).", jobLabels, nil)
	descLastUploaded    = prometheus.NewDesc("flinkgo_job_last_checkpoint_storage_bytes_uploaded", "Bytes the last completed checkpoint uploaded to object storage.", jobLabels, nil)
	storageDescs        = []*prometheus.Desc{descStorageRequests, descStorageFailed, descStorageUp, descStorageDown, descLastRequests, descLastUploaded}
)

func collectStorage(ch chan<- prometheus.Metric, info api.JobInfo, jl []string) {
	if s := info.Storage; s != nil {
		ch <- prometheus.MustNewConstMetric(descStorageRequests, prometheus.CounterValue, float64(s.Requests), jl...)
		ch <- prometheus.MustNewConstMetric(descStorageFailed, prometheus.CounterValue, float64(s.FailedRequests), jl...)
		ch <- prometheus.MustNewConstMetric(descStorageUp, prometheus.CounterValue, float64(s.BytesUploaded), jl...)
		ch <- prometheus.MustNewConstMetric(descStorageDown, prometheus.CounterValue, float64(s.BytesDownloaded), jl...)
	}
	if l := info.LatestCheckpoint; l != nil && l.Storage != nil {
		ch <- prometheus.MustNewConstMetric(descLastRequests, prometheus.GaugeValue, float64(l.Storage.Requests), jl...)
		ch <- prometheus.MustNewConstMetric(descLastUploaded, prometheus.GaugeValue, float64(l.Storage.BytesUploaded), jl...)
	}
}
