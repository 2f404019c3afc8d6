package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// AbandonedFile is what _metadata of a stop savepoint is renamed to when
// its job resumed from an older snapshot: the stop never committed, the
// resumed job's output goes another way, and a restore from the savepoint
// would repeat or lose records.
const AbandonedFile = MetadataFile + ".abandoned"

// savepointName matches the directories NewSavepointDir names.
var savepointName = regexp.MustCompile(`^savepoint-[0-9a-f]{1,6}-[0-9]+-[0-9a-f]{6}$`)

// Incomplete describes a savepoint directory that is not a usable
// savepoint: a crash during a savepoint or a stop left it without
// _metadata (up to the whole state size of files), or its stop was
// abandoned (AbandonedFile).
type Incomplete struct {
	Dir       string
	Abandoned bool
	Files     int   // state files (and temporary files) in it
	Bytes     int64 // their size
}

// Problem words what is wrong and what to do.
func (in *Incomplete) Problem() string {
	what := "incomplete: no _metadata (a crash during a savepoint or a stop left it)"
	if in.Abandoned {
		what = "abandoned: the stop that wrote it did not commit and its job resumed from an older snapshot, so a restore from it would repeat or lose output"
	}
	return fmt.Sprintf("%s; %d files, %d bytes; `flinkgo savepoint dispose --force %s` removes it", what, in.Files, in.Bytes, in.Dir)
}

// errNotLeftover means a directory is not one flinkgo could have left.
var errNotLeftover = errors.New("not an incomplete flinkgo savepoint")

// InspectIncomplete describes dir if it is an incomplete or abandoned
// savepoint: named as flinkgo names savepoints, without _metadata, and
// holding only files a savepoint writes (state files, their temporary
// files, _metadata's temporary or abandoned file), no directory. Anything
// else is an error wrapping errNotLeftover, so dispose --force cannot be
// aimed at an arbitrary directory.
func InspectIncomplete(fsys vfs.FS, dir string) (*Incomplete, error) {
	dir = vfs.Clean(dir)
	if !savepointName.MatchString(vfs.Base(dir)) {
		return nil, fmt.Errorf("%s: %w (its name is not savepoint-<job>-<n>-<suffix>)", dir, errNotLeftover)
	}
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	in := &Incomplete{Dir: dir}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == MetadataFile:
			return nil, fmt.Errorf("%s has a _metadata: %w (inspect it, or dispose of it without --force)", dir, errNotLeftover)
		case name == AbandonedFile:
			in.Abandoned = true
		case !e.Type().IsRegular() || !snapshotFile(name):
			return nil, fmt.Errorf("%s holds %q, which no savepoint writes: %w", dir, name, errNotLeftover)
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		in.Files++
		in.Bytes += fi.Size()
	}
	return in, nil
}

// snapshotFile reports whether a savepoint writes a file of this name.
func snapshotFile(name string) bool {
	return name == AbandonedFile || strings.HasPrefix(name, MetadataFile+".tmp-") || // vfs.WriteFileAtomic's
		(strings.HasSuffix(name, ".state") && !strings.HasPrefix(name, ".")) ||
		(strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".state.tmp")) // writeState's
}

// DisposeIncomplete removes an incomplete or abandoned savepoint (see
// InspectIncomplete, which it checks first).
func DisposeIncomplete(fsys vfs.FS, dir string) error {
	in, err := InspectIncomplete(fsys, dir)
	if err != nil {
		return err
	}
	return fsys.RemoveAll(in.Dir)
}

// IsNotLeftover reports whether err says a directory is not an
// incomplete savepoint.
func IsNotLeftover(err error) bool { return errors.Is(err, errNotLeftover) }

// Abandon turns the complete stop savepoint in dir into an abandoned one:
// its _metadata is renamed (atomically, then the directory synced), so
// nothing takes it for a savepoint any more, and InspectIncomplete can
// still tell what it was. A missing _metadata is not an error.
func Abandon(fsys vfs.FS, dir string) error {
	if obj, ok := vfs.Objects(fsys, dir); ok {
		return abandonObject(obj, dir)
	}
	err := fsys.Rename(filepath.Join(dir, MetadataFile), filepath.Join(dir, AbandonedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// PendingStop is a stop-with-savepoint whose _metadata a job was about to
// publish: the marker <checkpoints>/<job>/stop-<id> names its directory
// until a later attempt of the job knows whether it resumed from it.
type PendingStop struct {
	ID     int64
	Dir    string // the savepoint
	Marker string // the marker file
}

func pendingStopMarker(base, jobID string, id int64) string {
	return vfs.Join(base, jobID, fmt.Sprintf("stop-%d", id))
}

// MarkPendingStop durably records that stop savepoint id is written to
// dir, before its _metadata is: a crash after the publication but before
// the job recorded the stop leaves a complete-looking savepoint whose
// commit never happened, and the marker lets the next attempt abandon it.
func MarkPendingStop(fsys vfs.FS, base, jobID string, id int64, dir string) error {
	if err := vfs.MkdirAllDurable(fsys, vfs.Join(base, jobID), 0o755); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(fsys, pendingStopMarker(base, jobID, id), []byte(dir))
}

// PendingStops lists the markers of a job.
func PendingStops(fsys vfs.FS, base, jobID string) ([]PendingStop, error) {
	root := vfs.Join(base, jobID)
	entries, err := fsys.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PendingStop
	for _, e := range entries {
		var id int64
		if _, err := fmt.Sscanf(e.Name(), "stop-%d", &id); err != nil || e.IsDir() || e.Name() != fmt.Sprintf("stop-%d", id) {
			continue
		}
		marker := vfs.Join(root, e.Name())
		data, err := readRegular(fsys, marker, 64<<10)
		if err != nil {
			return nil, err
		}
		out = append(out, PendingStop{ID: id, Dir: string(data), Marker: marker})
	}
	return out, nil
}
