package engine

import (
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// snapshotFS is the view of the job's FS one snapshot is written through:
// its requests to an object store are counted (what the snapshot cost:
// api.CheckpointInfo.Storage) and end at the snapshot's deadline (trigger
// plus the checkpoint timeout), so retries of a failing store never
// outlive the checkpoint they serve. On a local disk it is the job's FS.
type snapshotFS struct {
	fs    vfs.FS
	meter *vfs.Meter
}

func (d *driver) newSnapshotFS(id int64, trigger time.Time) vfs.FS {
	var deadline time.Time
	if t := d.j.graph.Checkpointing.Timeout; t > 0 {
		deadline = trigger.Add(t)
	}
	m := &vfs.Meter{}
	s := snapshotFS{fs: vfs.Metered(d.fsys(), m, deadline), meter: m}
	if d.snapFS == nil {
		d.snapFS = map[int64]snapshotFS{}
	}
	d.snapFS[id] = s
	return s.fs
}

// snapshotFSOf is the view of snapshot id (the job's FS if none).
func (d *driver) snapshotFSOf(id int64) vfs.FS {
	if s, ok := d.snapFS[id]; ok {
		return s.fs
	}
	return d.fsys()
}

// storageCost returns and forgets what snapshot id cost in object
// storage (nil when it made no request).
func (d *driver) storageCost(id int64) *api.StorageCost {
	s, ok := d.snapFS[id]
	delete(d.snapFS, id)
	if !ok {
		return nil
	}
	return StorageCostOf(s.meter.Stats())
}

// StorageCostOf converts a meter's figures; nil when no request was made.
func StorageCostOf(s vfs.MeterStats) *api.StorageCost {
	if s.Requests == 0 {
		return nil
	}
	return &api.StorageCost{Requests: s.Requests, FailedRequests: s.Failed, BytesUploaded: s.Uploaded, BytesDownloaded: s.Downloaded}
}
