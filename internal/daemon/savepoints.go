package daemon

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// savepointDirs are the directories the daemon looks in for savepoints:
// the configured one, the one shutdown uses, and every directory a job of
// this daemon wrote a savepoint to.
func (d *Daemon) savepointDirs(known []string) []string {
	dirs := map[string]bool{vfs.Join(d.cfg.Home, "savepoints"): true}
	if d.cfg.SavepointsDir != "" {
		dirs[d.cfg.SavepointsDir] = true
	}
	for _, p := range known {
		dirs[vfs.Dir(p)] = true
	}
	out := make([]string, 0, len(dirs))
	for dir := range dirs {
		out = append(out, dir)
	}
	sort.Strings(out)
	return out
}

// listMetadataLimit bounds the _metadata files the listing reads (real
// ones are KiBs); a larger one is listed with a problem, not read.
const listMetadataLimit = 4 << 20

// savepointCatalog remembers what listing read. The dashboard lists every
// two seconds and savepoint directories may be shared with other users:
// each _metadata is decoded once per version (size, modification time),
// and one listing runs at a time, so concurrent requests cannot multiply
// the memory it takes.
type savepointCatalog struct {
	mu   sync.Mutex
	seen map[string]catalogEntry // directory -> what its _metadata held
}

type catalogEntry struct {
	size  int64
	mtime time.Time
	entry *api.SavepointEntry // nil: not a savepoint
}

// Savepoints lists the savepoints the daemon knows, newest first. Listing
// reads only each _metadata; Inspect checks the state files.
func (d *Daemon) Savepoints() []api.SavepointEntry {
	var known []string
	inProgress := map[string]bool{}
	entries := d.entries()
	for _, e := range entries {
		if e.job == nil {
			continue
		}
		for _, h := range e.job.Checkpoints().History {
			if isSavepoint(h.Kind) && h.Path != "" && h.Status == checkpoint.StatusCompleted.String() {
				known = append(known, h.Path)
			}
			if isSavepoint(h.Kind) && h.Path != "" && h.Status == checkpoint.StatusInProgress.String() {
				inProgress[vfs.Clean(h.Path)] = true
			}
		}
	}
	c := &d.catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	listed := map[string]catalogEntry{}
	out := []api.SavepointEntry{}
	add := func(dir string) {
		dir = vfs.Clean(dir)
		if _, done := listed[dir]; done {
			return
		}
		ce := d.catalogEntry(dir, c.seen[dir], inProgress[dir])
		listed[dir] = ce
		if ce.entry != nil {
			out = append(out, *ce.entry)
		}
	}
	for _, p := range known {
		add(p)
	}
	for _, dir := range d.savepointDirs(known) {
		names, err := d.fs.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, n := range names {
			if n.IsDir() && strings.HasPrefix(n.Name(), "savepoint-") {
				add(vfs.Join(dir, n.Name()))
			}
		}
	}
	c.seen = listed // forget directories that are gone
	sort.Slice(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out
}

// catalogEntry describes the savepoint in dir, reusing old when its
// _metadata did not change. A directory without _metadata is listed as
// incomplete (in progress, when a job is writing it) if it looks like a
// savepoint flinkgo left (checkpoint.InspectIncomplete).
func (d *Daemon) catalogEntry(dir string, old catalogEntry, writing bool) catalogEntry {
	fi, err := d.fs.Stat(vfs.Join(dir, checkpoint.MetadataFile))
	if err != nil || !fi.Mode().IsRegular() {
		return d.incompleteEntry(dir, writing)
	}
	ce := catalogEntry{size: fi.Size(), mtime: fi.ModTime()}
	if old.size == ce.size && old.mtime.Equal(ce.mtime) && (old.entry != nil || !old.mtime.IsZero()) {
		return old
	}
	if ce.size > listMetadataLimit {
		ce.entry = &api.SavepointEntry{Path: dir, Time: ce.mtime,
			Problem: fmt.Sprintf("_metadata has %d bytes, more than the %d the dashboard reads: use `flinkgo inspect %s`", ce.size, listMetadataLimit, dir)}
		return ce
	}
	dir, m, err := checkpoint.Load(d.fs, dir)
	if err != nil || !isSavepoint(m.Kind) {
		return ce
	}
	ce.entry = &api.SavepointEntry{Path: dir, JobID: m.JobID, JobName: m.JobName, CheckpointID: m.CheckpointID,
		Kind: m.Kind, Time: m.Timestamp, Size: m.Size(), Complete: true}
	return ce
}

// Inspect describes one savepoint of the list. Only savepoints the daemon
// lists can be read this way: the API must not read arbitrary paths for
// whoever reaches it. Its state files are checked by type and size only
// (no file is opened or read); `flinkgo inspect` also checks checksums.
func (d *Daemon) Inspect(path string) (*api.SavepointDetail, error) {
	var found *api.SavepointEntry
	for _, s := range d.Savepoints() {
		if s.Path == vfs.Clean(path) {
			found = &s
			break
		}
	}
	if found != nil && found.JobID == "" && found.Problem != "" {
		return nil, api.Errorf(api.CodeNotFound, "%s is not a usable savepoint: %s", found.Path, found.Problem)
	}
	if found == nil || found.JobID == "" {
		return nil, api.Errorf(api.CodeNotFound, "%q is not a savepoint this daemon lists (GET /v1/savepoints); `flinkgo inspect PATH` reads any path", path)
	}
	d.catalog.mu.Lock() // one read of savepoint files at a time
	defer d.catalog.mu.Unlock()
	dir, m, err := checkpoint.Load(d.fs, found.Path)
	if err != nil {
		return nil, api.Errorf(api.CodeNotFound, "%v", err)
	}
	out := &api.SavepointDetail{SavepointEntry: *found, MaxParallelism: m.MaxParallelism,
		SpecFingerprint: m.SpecFingerprint, Spec: m.Spec, Operators: []api.SnapshotOperator{}}
	if err := checkpoint.VerifySizes(d.fs, dir, m); err != nil {
		out.Complete, out.Problem = false, err.Error()
	}
	for _, op := range m.Operators {
		out.Operators = append(out.Operators, api.SnapshotOperator{UID: op.UID, Type: op.Type, Parallelism: op.Parallelism,
			Bytes: op.Size(), Keys: op.Keys()})
	}
	return out, nil
}

func isSavepoint(kind string) bool {
	return kind == checkpoint.Savepoint.String() || kind == checkpoint.StopSavepoint.String()
}

// incompleteEntry lists a savepoint directory without _metadata: one a job
// is writing, or one a crash left (or whose stop was abandoned), with what
// to do about it. Anything else is not listed.
func (d *Daemon) incompleteEntry(dir string, writing bool) catalogEntry {
	in, err := checkpoint.InspectIncomplete(d.fs, dir)
	if err != nil {
		return catalogEntry{}
	}
	e := &api.SavepointEntry{Path: dir, Size: in.Bytes, Problem: in.Problem()}
	if writing {
		e.Problem = "in progress"
	}
	if fi, err := d.fs.Stat(dir); err == nil {
		e.Time = fi.ModTime()
	}
	return catalogEntry{entry: e}
}
