package daemon

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime/checkpoint"
)

// savepointDirs are the directories the daemon looks in for savepoints:
// the configured one, the one shutdown uses, and every directory a job of
// this daemon wrote a savepoint to.
func (d *Daemon) savepointDirs(known []string) []string {
	dirs := map[string]bool{filepath.Join(d.cfg.Home, "savepoints"): true}
	if d.cfg.SavepointsDir != "" {
		dirs[d.cfg.SavepointsDir] = true
	}
	for _, p := range known {
		dirs[filepath.Dir(p)] = true
	}
	out := make([]string, 0, len(dirs))
	for dir := range dirs {
		out = append(out, dir)
	}
	sort.Strings(out)
	return out
}

// Savepoints lists the savepoints the daemon knows, newest first. Listing
// reads only each _metadata; whether the state files verify is checked by
// Inspect.
func (d *Daemon) Savepoints() []api.SavepointEntry {
	var known []string
	d.mu.Lock()
	entries := make([]*entry, 0, len(d.jobs))
	for _, e := range d.jobs {
		entries = append(entries, e)
	}
	d.mu.Unlock()
	for _, e := range entries {
		if e.job == nil {
			continue
		}
		for _, h := range e.job.Checkpoints().History {
			if isSavepoint(h.Kind) && h.Path != "" && h.Status == checkpoint.StatusCompleted.String() {
				known = append(known, h.Path)
			}
		}
	}
	seen := map[string]bool{}
	out := []api.SavepointEntry{}
	add := func(path string) {
		dir, m, err := checkpoint.Load(d.fs, path)
		if err != nil || seen[dir] || !isSavepoint(m.Kind) {
			return
		}
		seen[dir] = true
		out = append(out, api.SavepointEntry{Path: dir, JobID: m.JobID, JobName: m.JobName, CheckpointID: m.CheckpointID,
			Kind: m.Kind, Time: m.Timestamp, Size: m.Size(), Complete: true})
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
				add(filepath.Join(dir, n.Name()))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out
}

// Inspect describes one savepoint of the list, verifying its files. Only
// savepoints the daemon lists can be read this way: the API must not read
// arbitrary paths for whoever reaches it.
func (d *Daemon) Inspect(path string) (*api.SavepointDetail, error) {
	var found *api.SavepointEntry
	for _, s := range d.Savepoints() {
		if s.Path == filepath.Clean(path) {
			found = &s
			break
		}
	}
	if found == nil {
		return nil, api.Errorf(api.CodeNotFound, "%q is not a savepoint this daemon lists (GET /v1/savepoints); `flinkgo inspect PATH` reads any path", path)
	}
	dir, m, err := checkpoint.Load(d.fs, found.Path)
	if err != nil {
		return nil, api.Errorf(api.CodeNotFound, "%v", err)
	}
	out := &api.SavepointDetail{SavepointEntry: *found, MaxParallelism: m.MaxParallelism,
		SpecFingerprint: m.SpecFingerprint, Spec: m.Spec, Operators: []api.SnapshotOperator{}}
	if verr := d.verified.check(d, dir, m); verr != "" {
		out.Complete, out.Problem = false, verr
	}
	for _, op := range m.Operators {
		out.Operators = append(out.Operators, api.SnapshotOperator{UID: op.UID, Type: op.Type, Parallelism: op.Parallelism,
			Bytes: op.Size(), Keys: op.Keys()})
	}
	return out, nil
}

// verifyCache remembers verification results: a savepoint never changes
// after its _metadata is written, and verifying reads every state file,
// which the dashboard's refresh must not repeat every two seconds.
type verifyCache struct {
	mu  sync.Mutex
	res map[string]string // dir -> problem ("" when it verifies)
}

func (c *verifyCache) check(d *Daemon, dir string, m *checkpoint.Metadata) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.res[dir]; ok {
		return p
	}
	if c.res == nil || len(c.res) > 1000 {
		c.res = map[string]string{}
	}
	p := ""
	if err := checkpoint.Verify(d.fs, dir, m); err != nil {
		p = err.Error()
	}
	c.res[dir] = p
	return p
}

func isSavepoint(kind string) bool {
	return kind == checkpoint.Savepoint.String() || kind == checkpoint.StopSavepoint.String()
}
