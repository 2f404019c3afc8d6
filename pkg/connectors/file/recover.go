package file

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Ownership: subtask i only creates, deletes or renumbers files named with
// index i; subtask 0 also looks after indices >= the parallelism (left by
// a larger parallelism). Restored pending and in-progress files may carry
// any index: whoever received them in the split commits or resumes them,
// and the owner of their index leaves them alone because every subtask
// knows every referenced file from the union list.
func (w *writer) owns(index int) bool {
	return index == w.cfg.Subtask || w.cfg.Subtask == 0 && index >= w.cfg.Parallelism
}

// Start prepares a fresh start (no restored state for this sink): it
// creates the path and continues part numbering after any part files of
// the indices this subtask owns, so that nothing existing is overwritten.
// Nothing is deleted: hidden leftovers may still belong to a snapshot
// someone restores later.
func (w *writer) Start() error {
	if err := vfs.MkdirAllDurable(w.fs, w.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", w.cfg.Dir, err)
	}
	found, err := w.scan()
	if err != nil {
		return err
	}
	for _, f := range found {
		w.bump(f.index, f.part+1)
	}
	return nil
}

// bump raises the next part number of an owned index to at least next.
func (w *writer) bump(index int, next int64) {
	switch {
	case index == w.cfg.Subtask:
		w.next = max(w.next, next)
	case w.owns(index):
		w.carried[index] = max(w.carried[index], next)
	}
}

// Restore brings the writer to a restored snapshot: it re-commits the
// restored pending parts (idempotently), resumes the in-progress parts
// truncated to their checkpointed length, and deletes, among the files of
// the indices this subtask owns, finished parts numbered at or past the
// restored counter (committed after the snapshot was taken: the restored
// job writes their records again) and hidden parts no restored state
// refers to. Each deletion is logged.
func (w *writer) Restore(r restored, now time.Time) error {
	if err := w.fire("file.restore"); err != nil {
		return err
	}
	if err := w.checkNames(r); err != nil {
		return err
	}
	if err := vfs.MkdirAllDurable(w.fs, w.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", w.cfg.Dir, err)
	}
	referenced := map[string]bool{}
	for _, c := range r.Counters {
		for idx, next := range c.Next {
			w.bump(idx, next)
		}
		for _, ref := range c.Referenced {
			referenced[ref] = true
		}
	}
	for _, p := range r.Pending {
		w.bump(p.Index, p.Part+1)
	}
	for _, p := range r.InProgress {
		w.bump(p.Index, p.Part+1)
	}
	if err := w.recommit(r.Pending); err != nil {
		return err
	}
	for _, x := range r.InProgress {
		if err := w.resumeOne(x, now); err != nil {
			return err
		}
	}
	return w.cleanup(referenced)
}

func (w *writer) recommit(pending []pending) error {
	dirs := map[string]bool{}
	for _, p := range pending {
		err := w.fire("file.commit", p.Checkpoint, w.path(p.Bucket, p.Final))
		if err == nil {
			err = w.commitFile(p)
		}
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		dirs[p.Bucket] = true
	}
	return w.syncDirs(dirs)
}

// resumeOne resumes x; a second in-progress part for a bucket (two old
// subtasks merged into this one) or one past the open-file limit is
// rolled at once and committed with the next checkpoint. So is every one
// when the format is parquet: a parquet sink never leaves a part in
// progress at a checkpoint, so x was written by the sink in another
// format (line or json) before the restore, and is finished as it is.
func (w *writer) resumeOne(x resumable, now time.Time) error {
	p, err := w.resume(x, now)
	if err != nil {
		return err
	}
	w.dirs[x.Bucket] = true
	if w.open[x.Bucket] != nil || len(w.open) >= w.cfg.MaxOpen || w.rows != nil {
		return w.roll(p)
	}
	w.open[x.Bucket] = p
	return nil
}

// nextOf is the restored next part number of an owned index.
func (w *writer) nextOf(index int) int64 {
	if index == w.cfg.Subtask {
		return w.next
	}
	return w.carried[index]
}

func (w *writer) cleanup(referenced map[string]bool) error {
	if w.obj != nil {
		return w.cleanupObjects(referenced)
	}
	found, err := w.scan()
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, f := range found {
		rel := path.Join(f.bucket, f.name)
		switch {
		case f.hidden && !referenced[rel]:
			w.log.Info().Str("file", w.path(f.bucket, f.name)).Msg("removing hidden part file no restored state refers to")
		case !f.hidden && f.part >= w.nextOf(f.index):
			w.log.Warn().Str("file", w.path(f.bucket, f.name)).Int64("part", f.part).Int64("restored_counter", w.nextOf(f.index)).
				Msg("deleting part file committed after the restored snapshot (the restored job writes its records again)")
		default:
			continue
		}
		if err := w.fs.Remove(w.path(f.bucket, f.name)); err != nil {
			return fmt.Errorf("restore: remove %s: %w", w.path(f.bucket, f.name), err)
		}
		dirs[f.bucket] = true
	}
	return w.syncDirs(dirs)
}

// found is a part file of an owned index met by scan.
type found struct {
	bucket string // "/"-separated, relative to the path
	name   string
	index  int
	part   int64
	hidden bool
}

// scan walks the path for part files of the indices this subtask owns.
// Directories starting with "." are not entered.
func (w *writer) scan() ([]found, error) {
	if w.obj != nil {
		return w.scanObjects()
	}
	var out []found
	var walk func(bucket string) error
	walk = func(bucket string) error {
		entries, err := w.fs.ReadDir(w.dirPath(bucket))
		if err != nil {
			return fmt.Errorf("scan %s: %w", w.dirPath(bucket), err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() {
				if !strings.HasPrefix(name, ".") {
					if err := walk(path.Join(bucket, name)); err != nil {
						return err
					}
				}
				continue
			}
			idx, part, hidden, ok := w.cfg.Naming.Parse(name)
			if ok && w.owns(idx) {
				out = append(out, found{bucket: bucket, name: name, index: idx, part: part, hidden: hidden})
			}
		}
		return nil
	}
	return out, walk("")
}

// checkNames refuses restored names that are not part files of a bucket
// below the path: the writer touches no file the user did not point it at.
func (w *writer) checkNames(r restored) error {
	check := func(bucket, hidden, final string) error {
		if bucket != "" && checkRelDir(bucket) != nil || hiddenFinal(hidden) != final ||
			strings.ContainsAny(hidden, `/\`) || final == "" {
			return fmt.Errorf("restore: file sink state names bucket %q, file %q/%q, which is not a part file below %s: the snapshot is corrupt or was tampered with",
				bucket, hidden, final, w.cfg.Dir)
		}
		return nil
	}
	for _, p := range r.Pending {
		if err := check(p.Bucket, p.Hidden, p.Final); err != nil {
			return err
		}
	}
	for _, p := range r.InProgress {
		if err := check(p.Bucket, p.Hidden, p.Final); err != nil {
			return err
		}
	}
	return nil
}
