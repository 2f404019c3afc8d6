package api

// StorageCost is what was asked of an object store: requests (each billed
// by S3) and bytes moved.
type StorageCost struct {
	Requests        int64 `json:"requests"`
	FailedRequests  int64 `json:"failedRequests,omitempty"`
	BytesUploaded   int64 `json:"bytesUploaded"`
	BytesDownloaded int64 `json:"bytesDownloaded,omitempty"`
}
