package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// A version-1 registry file (written before the registry had a recovery
// record) still loads: its restore point, savepoint and restarts become a
// Legacy recovery record, and the next save writes version 2.
func TestRegistryReadsVersion1(t *testing.T) {
	data, err := os.ReadFile("testdata/registry/v1.json")
	require.NoError(t, err)
	var v1 Record
	require.NoError(t, json.Unmarshal(data, &v1))
	mem := vfs.NewMem()
	reg := &registry{fs: mem, dir: "/home/jobs", checkpointsDir: "/chk"}
	require.NoError(t, mem.MkdirAll(reg.jobDir(v1.ID), 0o700))
	require.NoError(t, vfs.WriteFileAtomic(mem, filepath.Join(reg.jobDir(v1.ID), "job.json"), data))

	recs, errs := reg.load()
	require.Empty(t, errs)
	require.Len(t, recs, 1)
	got := recs[0]
	require.Equal(t, recordVersion, got.Version)
	require.Equal(t, RecoveryRecord{
		RestorePoint: &PointRecord{ID: 12, Kind: checkpoint.Periodic.String(), Dir: "/chk/" + v1.ID + "/chk-12"},
		Initial:      &PointRecord{Kind: checkpoint.Savepoint.String(), Dir: "/sp/savepoint-3f1c0d-7-abcdef"},
		Restarts:     2, Legacy: true,
	}, got.Recovery)
	rec, err := got.Recovery.recovery()
	require.NoError(t, err)
	require.True(t, rec.Legacy)
	require.Equal(t, checkpoint.Point{ID: 12, Kind: checkpoint.Periodic, Dir: "/chk/" + v1.ID + "/chk-12"}, *rec.RestorePoint)

	require.NoError(t, reg.save(got))
	recs, errs = reg.load()
	require.Empty(t, errs)
	require.Equal(t, got.Recovery, recs[0].Recovery, "saved as version 2, read back unchanged")

	// A stop savepoint as the restore point of a version-1 record.
	v1.Info.RestorePoint, v1.Info.RestorePointID = "/sp/savepoint-3f1c0d-20-aaaaaa", 20
	migrateV1(&v1, "/chk")
	require.Equal(t, checkpoint.StopSavepoint.String(), v1.Recovery.RestorePoint.Kind)
}

// A record of an unknown version, or with an unknown snapshot kind, is an
// error naming the file, not a job resumed from guesses.
func TestRegistryRefusesUnknownRecords(t *testing.T) {
	mem := vfs.NewMem()
	reg := &registry{fs: mem, dir: "/home/jobs"}
	require.NoError(t, mem.MkdirAll("/home/jobs/a", 0o700))
	require.NoError(t, vfs.WriteFileAtomic(mem, "/home/jobs/a/job.json", []byte(`{"version": 3, "id": "a"}`)))
	recs, errs := reg.load()
	require.Empty(t, recs)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "/home/jobs/a/job.json: registry format version 3")

	_, err := RecoveryRecord{RestorePoint: &PointRecord{ID: 1, Kind: "snapshot", Dir: "/x"}}.recovery()
	require.ErrorContains(t, err, `unknown snapshot kind "snapshot"`)
}
