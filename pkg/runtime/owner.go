package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// An output directory has one owner: the job whose sink writes it. The
// owner is named in a marker file in the directory, written through the
// vfs on first use and checked whenever a sink opens (start, restart,
// restore), so a job of another daemon, or a new job, cannot write into a
// directory another job writes: two writers delete each other's part
// files and duplicate or lose records. The daemon also refuses such jobs
// at submit (it knows which of its jobs still run), with the same rule.

// OwnerFile is the marker's name in an output directory. It is hidden, so
// readers of finished output (flinkgo dev verify) skip it.
const OwnerFile = ".flinkgo-owner"

// OutputOwner is the marker's content.
type OutputOwner struct {
	Version  int       `json:"version"`
	Job      string    `json:"job"`
	JobName  string    `json:"jobName,omitempty"`
	Operator string    `json:"operator"`
	Since    time.Time `json:"since"`
}

// OutputClaim is a job's claim on an output directory.
type OutputClaim struct {
	Job, JobName, Operator string
	// Restoring: the operator restores its state from a snapshot of job
	// RestoredJob (its own, or one it continues with run -s).
	Restoring   bool
	RestoredJob string
	// AllowNonEmpty: the user allowed writing into a directory that holds
	// other output or another job's marker (run --allow-non-empty-output).
	AllowNonEmpty bool
	// OwnerEnded reports whether the job with the given id is known to
	// have ended (canceled, failed, finished: the daemon that ran it says
	// so). Nil, or false, means the owner may still run: a job of another
	// daemon, or one removed from the registry, is never taken as ended.
	OwnerEnded func(job string) bool
}

// ownerEnded says whether the marker's job is known to have ended.
func (c OutputClaim) ownerEnded(owner *OutputOwner) bool {
	return owner != nil && c.OwnerEnded != nil && c.OwnerEnded(owner.Job)
}

var (
	// ErrOutputOwned: the output (a directory, a Kafka sink's transactional
	// ids) belongs to another job.
	ErrOutputOwned = errors.New("output owned by another job")
	// ErrOutputNotEmpty: a new job would write into a directory with output.
	ErrOutputNotEmpty = errors.New("output directory not empty")
)

// Check is the ownership rule: may c write into dir, which holds the
// marker owner (nil: none) and is empty (marker aside) or not? It is pure.
//
//   - The claimant's own directory: yes.
//   - Another job's: only to continue it, restoring that job's snapshot,
//     or when the user allowed it, or when it is free: the owner is known
//     to have ended and the directory holds nothing but the marker (the
//     owner committed nothing and left no part file that a restore of its
//     snapshots would commit or resume; see docs/ownership.md).
//   - No marker: when it is empty, when the claimant restores (output from
//     before markers existed), or when the user allowed it.
func (c OutputClaim) Check(dir string, owner *OutputOwner, empty bool) error {
	switch {
	case owner != nil && owner.Job == c.Job:
		return nil
	case owner != nil && (c.AllowNonEmpty || (c.Restoring && owner.Job == c.RestoredJob)):
		return nil
	case empty && c.ownerEnded(owner):
		return nil
	case owner != nil && c.ownerEnded(owner):
		return fmt.Errorf("%w: %s belongs to job %s (%q, operator %q, since %s; %s), which has ended but left files there (finished output, or part files that a restore of its snapshots would commit): to continue its output restore one of its savepoints with `flinkgo run -s`; otherwise give this job another path, or pass --allow-non-empty-output to take the directory over",
			ErrOutputOwned, dir, owner.Job, owner.JobName, owner.Operator, owner.Since.Format(time.RFC3339), vfs.Join(dir, OwnerFile))
	case owner != nil:
		return fmt.Errorf("%w: %s belongs to job %s (%q, operator %q, since %s; %s): a second job writing there would delete or duplicate its part files. Give this job another path; if that job no longer runs, restore one of its savepoints with `flinkgo run -s`, or pass --allow-non-empty-output to take the directory over",
			ErrOutputOwned, dir, owner.Job, owner.JobName, owner.Operator, owner.Since.Format(time.RFC3339), vfs.Join(dir, OwnerFile))
	case empty || c.Restoring || c.AllowNonEmpty:
		return nil
	}
	return fmt.Errorf("%w: %s holds files but no job's ownership marker; a new job would mix its output with them: give it an empty or new directory, or pass --allow-non-empty-output to write there anyway",
		ErrOutputNotEmpty, dir)
}

// InspectOutput reads dir's marker (nil when there is none) and whether the
// directory is empty or missing, the marker and its temporary files aside.
func InspectOutput(fsys vfs.FS, dir string) (owner *OutputOwner, empty bool, err error) {
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	empty = true
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), OwnerFile) {
			empty = false
		}
	}
	data, err := vfs.ReadFile(fsys, vfs.Join(dir, OwnerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, empty, nil
	}
	if err != nil {
		return nil, empty, err
	}
	owner = &OutputOwner{}
	if err := json.Unmarshal(data, owner); err != nil || owner.Job == "" {
		return nil, empty, fmt.Errorf("%s is not a flinkgo ownership marker (%v): remove it if no job writes into %s", vfs.Join(dir, OwnerFile), err, dir)
	}
	return owner, empty, nil
}

// ClaimOutput makes dir c's output directory: it creates dir, checks the
// rule (Check) and writes the marker, durably, before the operator writes
// anything there. A first marker is created only if absent (two claimants
// racing: one wins, the other checks the winner's marker); a claim that
// takes a directory over replaces the marker. Operators call it when they
// open, on every subtask (all but the first find their own marker).
func ClaimOutput(fsys vfs.FS, dir string, c OutputClaim) error {
	if err := vfs.MkdirAllDurable(fsys, dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for range 3 {
		owner, empty, err := InspectOutput(fsys, dir)
		if err != nil {
			return err
		}
		if err := c.Check(dir, owner, empty); err != nil {
			return err
		}
		if owner != nil && owner.Job == c.Job {
			return nil
		}
		data, _ := json.Marshal(OutputOwner{Version: 1, Job: c.Job, JobName: c.JobName, Operator: c.Operator, Since: time.Now().UTC()})
		if owner != nil {
			return vfs.WriteFileAtomic(fsys, vfs.Join(dir, OwnerFile), data)
		}
		if err := createMarker(fsys, dir, data); !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return fmt.Errorf("claim %s: its ownership marker keeps changing", dir)
}

// createMarker publishes the marker only if none exists: a synced
// temporary file hard-linked to its name (fs.ErrExist when taken), or in
// object storage a create-if-absent PUT.
func createMarker(fsys vfs.FS, dir string, data []byte) error {
	path := vfs.Join(dir, OwnerFile)
	if obj, ok := vfs.Objects(fsys, path); ok {
		return obj.PutObject(path, data, true)
	}
	tmp := fmt.Sprintf("%s.tmp-%016x", path, rand.Uint64())
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	defer func() { _ = fsys.Remove(tmp) }()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := fsys.Link(tmp, path); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}
