package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Which job's output was checked, and did it write any: a file sink's
// directory names its owner in a marker (runtime.OwnerFile). A finished
// file is the owner's when it was last modified at or after the marker's
// time (when the owner took the directory: its first open, or a restore
// that continued another job's output); older files are output of jobs
// before it. Object stores keep whole seconds, so the marker's time is
// cut to the second: a file committed in the very second the owner took
// over counts as the owner's.

// readOwner reads the ownership marker at the root of fsys (nil: none).
func readOwner(fsys fs.FS) (*runtime.OutputOwner, error) {
	data, err := fs.ReadFile(fsys, runtime.OwnerFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o := &runtime.OutputOwner{}
	if err := json.Unmarshal(data, o); err != nil || o.Job == "" {
		return nil, fmt.Errorf("%s is not a flinkgo ownership marker (%v)", runtime.OwnerFile, err)
	}
	return o, nil
}

// countNew counts d among the owner's files when it is one.
func (c *checker) countNew(d fs.DirEntry) error {
	if c.r.Owner == nil {
		return nil
	}
	info, err := d.Info()
	if err != nil {
		return err
	}
	if !info.ModTime().Before(c.r.Owner.Since.Truncate(time.Second)) {
		c.r.NewFiles++
	}
	return nil
}

// CheckOwner is the rule of `dev verify --path`: the output must hold at
// least one file its owner committed, so that a check of a directory
// where the last job wrote nothing does not pass on older files; with job
// (an id or a job name; "": any) the owner must be that job. Output
// without a marker passes when job is "" (written before markers
// existed, or not by flinkgo): nothing tells which job wrote it.
func (r *Report) CheckOwner(path, job string) error {
	o := r.Owner
	switch {
	case o == nil && job != "":
		return fmt.Errorf("%s has no ownership marker (%s): no job's output can be told apart there", path, runtime.OwnerFile)
	case o == nil:
		return nil
	case job != "" && job != o.Job && job != o.JobName:
		return fmt.Errorf("%s is the output of job %s (%q), not of %s", path, o.Job, o.JobName, job)
	case r.NewFiles == 0:
		return fmt.Errorf("job %s (%q) has committed nothing in %s since it took the directory at %s: the %s there are older output (is the job running and checkpointing? `flinkgo stop` commits what it wrote)",
			o.Job, o.JobName, path, o.Since.Format(time.RFC3339), plural(int64(r.Files), "file"))
	}
	return nil
}

// ownerLine names the owner in the text report.
func (r *Report) ownerLine() string {
	o := r.Owner
	return fmt.Sprintf("output of job %s (%q, operator %q) since %s: %d of %s committed by it",
		o.Job, o.JobName, o.Operator, o.Since.Format(time.RFC3339), r.NewFiles, plural(int64(r.Files), "file"))
}
