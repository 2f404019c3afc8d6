package engine

import (
	"io"
	"os"
	"path/filepath"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Env is what the daemon lends to a job's operators.
type Env struct {
	// FS is the filesystem for state and sinks (vfs.Default in production).
	FS vfs.FS
	// Stdout receives print sink lines (the daemon's stdout); may be nil.
	Stdout io.Writer
	// OutFile receives print sink lines too (the job's .out file); may be nil.
	OutFile io.Writer
	// Faults is the test hook for injecting failures; nil in production.
	Faults runtime.FaultHook
	// AllowNonEmptyOutput: the user allowed the job to write into output
	// directories that hold other output or another job's ownership
	// marker (run --allow-non-empty-output; see runtime.OutputClaim).
	AllowNonEmptyOutput bool
	// JobEnded reports whether a job, by id, is known to have ended (nil:
	// none is); output directories of ended jobs that hold only their
	// marker are free to take (runtime.OutputClaim.OwnerEnded).
	JobEnded func(job string) bool
	// PebbleFS and PebbleDir are where pebble jobs keep their working
	// state (state.backend.pebble.localdir); nil and "": FS, and
	// flinkgo-pebble under the temporary directory.
	PebbleFS  vfs.FS
	PebbleDir string
}

// pebble returns the file system and root of pebble jobs' working state.
func (e *Env) pebble() (vfs.FS, string) {
	fsys, dir := e.PebbleFS, e.PebbleDir
	if fsys == nil {
		fsys = e.FS
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "flinkgo-pebble")
	}
	return fsys, dir
}

// Fire consults the fault hook, if any.
func (e *Env) Fire(point string, attrs ...any) error {
	if e == nil || e.Faults == nil {
		return nil
	}
	return e.Faults.Fire(point, attrs...)
}

// printOut is where print sinks write: both of Stdout and OutFile that are
// set (nil: neither).
func (e *Env) printOut() io.Writer {
	switch {
	case e.Stdout != nil && e.OutFile != nil:
		return io.MultiWriter(e.Stdout, e.OutFile)
	case e.Stdout != nil:
		return e.Stdout
	case e.OutFile != nil:
		return e.OutFile
	}
	return nil
}
