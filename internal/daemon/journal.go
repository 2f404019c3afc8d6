package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// journalVersion is the format of a job's events.json.
const journalVersion = 1

// journal is what a daemon restart keeps of a job's event log (the last
// eventsKept) and exception history (the last exceptionsKept):
// $FLINKGO_HOME/jobs/<id>/events.json, next to the job's record. Display
// only: nothing decides anything from it. It is written when the job ends
// in this daemon (finished, failed, canceled, suspended by a shutdown), and
// again by the sampler's last look at it, not per event: a job that
// restarts in a loop would otherwise write a file per failure. A crashed
// daemon therefore loses the events of its running jobs since they last
// ended here; the registry keeps their durable facts.
type journal struct {
	Version             int                `json:"version"`
	Events              []api.JobEvent     `json:"events"`
	Exceptions          []api.JobException `json:"exceptions"`
	ExceptionsTruncated bool               `json:"exceptionsTruncated,omitempty"`
}

func (r *registry) journalPath(id string) string { return filepath.Join(r.jobDir(id), "events.json") }

// saveJournal writes job id's journal atomically. In HA mode the records
// live in etcd and nothing is written: the journal stays in memory.
func (r *registry) saveJournal(id string, j journal) error {
	if r.cluster != nil {
		return nil
	}
	j.Version = journalVersion
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := vfs.MkdirAllDurable(r.fs, r.jobDir(id), 0o700); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(r.fs, r.journalPath(id), data)
}

// loadJournal reads job id's journal: an empty one when there is none (a
// job that never ended here, or HA mode), an error naming the file when it
// cannot be read.
func (r *registry) loadJournal(id string) (journal, error) {
	if r.cluster != nil {
		return journal{}, nil
	}
	path := r.journalPath(id)
	data, err := vfs.ReadFile(r.fs, path)
	if errors.Is(err, fs.ErrNotExist) {
		return journal{}, nil
	}
	if err != nil {
		return journal{}, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return journal{}, fmt.Errorf("%s: %w", path, err)
	}
	if j.Version != journalVersion {
		return journal{}, fmt.Errorf("%s: events format version %d is not supported by this flinkgo (written by a newer one?)", path, j.Version)
	}
	return j, nil
}
