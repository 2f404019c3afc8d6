package daemon

import (
	"fmt"
	"strings"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// RecoveryRecord is the durable part of a registry record that resuming a
// job reads: written by the job's OnRecord before anything a snapshot
// commits is committed, so it never falls behind committed output. It is
// the registry's own type; the REST display type (api.JobInfo) in
// Record.Info is built for users and never read back for recovery.
type RecoveryRecord struct {
	// RestorePoint is the newest snapshot whose completion may have
	// committed output.
	RestorePoint *PointRecord `json:"restorePoint,omitempty"`
	// Initial is the savepoint the job was submitted with.
	Initial  *PointRecord `json:"initial,omitempty"`
	Retained []int64      `json:"retained,omitempty"`
	NextID   int64        `json:"nextCheckpointId,omitempty"`
	Restarts int          `json:"restarts"`
	// Legacy: migrated from a version-1 record (see engine.Recovery).
	Legacy bool `json:"legacy,omitempty"`
}

// PointRecord is a snapshot in a RecoveryRecord.
type PointRecord struct {
	ID   int64  `json:"id"`
	Kind string `json:"kind"`
	Dir  string `json:"dir"`
}

func pointRecord(p *checkpoint.Point) *PointRecord {
	if p == nil {
		return nil
	}
	return &PointRecord{ID: p.ID, Kind: p.Kind.String(), Dir: p.Dir}
}

func (p *PointRecord) point() (*checkpoint.Point, error) {
	if p == nil {
		return nil, nil
	}
	kind, err := checkpoint.ParseKind(p.Kind)
	if err != nil {
		return nil, err
	}
	return &checkpoint.Point{ID: p.ID, Kind: kind, Dir: p.Dir}, nil
}

func recoveryRecord(r engine.Recovery) RecoveryRecord {
	return RecoveryRecord{RestorePoint: pointRecord(r.RestorePoint), Initial: pointRecord(r.Initial),
		Retained: r.Retained, NextID: r.NextID, Restarts: r.Restarts, Legacy: r.Legacy}
}

func (r RecoveryRecord) recovery() (engine.Recovery, error) {
	rp, err := r.RestorePoint.point()
	if err != nil {
		return engine.Recovery{}, fmt.Errorf("restore point: %w", err)
	}
	initial, err := r.Initial.point()
	if err != nil {
		return engine.Recovery{}, fmt.Errorf("initial savepoint: %w", err)
	}
	return engine.Recovery{RestorePoint: rp, Initial: initial, Retained: r.Retained, NextID: r.NextID,
		Restarts: r.Restarts, Legacy: r.Legacy}, nil
}

// migrateV1 derives the recovery record of a version-1 registry file, which
// had none, from what it showed (the only place a display field is read
// back): its restore point may lag behind committed output, so it is
// marked Legacy and the restore decision treats it with care.
func migrateV1(rec *Record, checkpointsDir string) {
	info := rec.Info
	r := RecoveryRecord{Restarts: info.Restarts, Legacy: true}
	if rec.SavepointPath != "" {
		r.Initial = &PointRecord{Kind: checkpoint.Savepoint.String(), Dir: rec.SavepointPath}
	}
	if info.RestorePoint != "" {
		kind := checkpoint.StopSavepoint
		switch {
		case strings.HasPrefix(info.RestorePoint, vfs.Join(checkpointsDir, rec.ID)+"/"):
			kind = checkpoint.Periodic
		case info.RestorePoint == rec.SavepointPath:
			kind = checkpoint.Savepoint
		}
		r.RestorePoint = &PointRecord{ID: info.RestorePointID, Kind: kind.String(), Dir: info.RestorePoint}
	}
	rec.Recovery = r
	rec.Version = recordVersion
}
