package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"time"

	"github.com/flinkgo/flinkgo/internal/ha"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Record is a job's entry in the registry ($FLINKGO_HOME/jobs/<id>/job.json):
// enough to show it after a restart and to resume it after a crash.
type Record struct {
	Version               int          `json:"version"`
	ID                    string       `json:"id"`
	Name                  string       `json:"name"`
	File                  string       `json:"file,omitempty"`
	Spec                  string       `json:"spec"`
	State                 api.JobState `json:"state"`
	SubmitTime            time.Time    `json:"submitTime"`
	UpdateTime            time.Time    `json:"updateTime"`
	SavepointPath         string       `json:"savepointPath,omitempty"`
	AllowNonRestoredState bool         `json:"allowNonRestoredState,omitempty"`
	AllowNonEmptyOutput   bool         `json:"allowNonEmptyOutput,omitempty"`
	// RequestID is the client's id of the submission that created the job
	// (api.SubmitRequest.RequestID), so a retry finds it after a restart.
	RequestID string `json:"requestId,omitempty"`
	// Recovery is what resuming the job reads (since version 2).
	Recovery RecoveryRecord `json:"recovery"`
	// Info is the last known state of the job, shown for jobs that are not
	// running in this daemon (finished ones, or before recovery). Display
	// only: recovery reads Recovery.
	Info api.JobInfo `json:"info"`
}

// recordVersion 2 added Recovery; version 1 files are migrated on load
// (migrateV1).
const recordVersion = 2

// registry stores job records through the vfs, each written atomically.
type registry struct {
	fs  vfs.FS
	dir string // $FLINKGO_HOME/jobs
	// checkpointsDir is state.checkpoints.dir, for migrating version 1.
	checkpointsDir string
	// cluster, in HA mode, holds the records instead (in etcd), and
	// writes one only while this daemon owns its job.
	cluster *ha.Node
}

func (r *registry) jobDir(id string) string { return filepath.Join(r.dir, id) }

func (r *registry) save(rec *Record) error {
	rec.Version = recordVersion
	rec.UpdateTime = time.Now()
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if r.cluster != nil {
		return r.cluster.Save(rec.ID, !rec.State.Terminal(), rec.RequestID, data)
	}
	if err := vfs.MkdirAllDurable(r.fs, r.jobDir(rec.ID), 0o700); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(r.fs, filepath.Join(r.jobDir(rec.ID), "job.json"), data)
}

// remove deletes an ended job's directory (record, events, charts, job.out). In HA
// mode the record is the cluster's and stays.
func (r *registry) remove(id string) error {
	if r.cluster != nil {
		return nil
	}
	return r.fs.RemoveAll(r.jobDir(id))
}

// load reads every record; unreadable ones are returned as errors and
// skipped, so one damaged file does not keep the daemon from starting.
func (r *registry) load() ([]*Record, []error) {
	if r.cluster != nil {
		return nil, nil // HA mode: the cluster hands out its jobs (Daemon.Adopt)
	}
	entries, err := r.fs.ReadDir(r.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{err}
	}
	var out []*Record
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(r.dir, e.Name(), "job.json")
		data, err := vfs.ReadFile(r.fs, path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		rec := &Record{}
		if err := json.Unmarshal(data, rec); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		switch rec.Version {
		case 1:
			migrateV1(rec, r.checkpointsDir)
		case recordVersion:
		default:
			errs = append(errs, fmt.Errorf("%s: registry format version %d is not supported by this flinkgo (written by a newer one?)", path, rec.Version))
			continue
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SubmitTime.Before(out[j].SubmitTime) })
	return out, errs
}
