package vfs

import (
	"errors"
	"io/fs"
	"sync/atomic"
)

// Meter counts what an ObjectFS asked of its store: the costs of object
// storage (requests are billed, bytes cross a network). A Meter is safe for
// concurrent use; the zero value is ready.
type Meter struct {
	requests, failed     atomic.Int64
	uploaded, downloaded atomic.Int64
}

// MeterStats is a Meter's figures at one moment.
type MeterStats struct {
	Requests   int64 `json:"requests"`
	Failed     int64 `json:"failedRequests,omitempty"`
	Uploaded   int64 `json:"bytesUploaded"`
	Downloaded int64 `json:"bytesDownloaded"`
}

// Stats returns the figures so far.
func (m *Meter) Stats() MeterStats {
	if m == nil {
		return MeterStats{}
	}
	return MeterStats{Requests: m.requests.Load(), Failed: m.failed.Load(), Uploaded: m.uploaded.Load(), Downloaded: m.downloaded.Load()}
}

// meters is the list of meters a request is counted in.
type meters []*Meter

// request counts one request; an answer that an object does or does not
// exist (a HEAD of a missing key, a create-if-absent that lost) is an
// answer, not a failure.
func (ms meters) request(err error, up, down int64) {
	failed := err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) && !errors.Is(err, ErrNoUpload)
	for _, m := range ms {
		m.requests.Add(1)
		if failed {
			m.failed.Add(1)
		}
		m.uploaded.Add(up)
		m.downloaded.Add(down)
	}
}

func (ms meters) with(m *Meter) meters {
	out := make(meters, 0, len(ms)+1)
	return append(append(out, ms...), m)
}

func (ms meters) download(n int64) {
	for _, m := range ms {
		m.downloaded.Add(n)
	}
}
