package file

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// errMissing means a part file that a restored snapshot refers to is gone
// under both its hidden and its finished name: output was lost.
var errMissing = errors.New("part file missing")

// errCollision means a finished name is taken by another file while the
// part to be committed to it still exists: committing would overwrite it.
var errCollision = errors.New("finished part file name already taken")

// commitFile renames a pending part to its finished name, idempotently:
// hidden gone and finished present (with the recorded size) means it was
// committed before. It never replaces an existing finished file. The
// caller syncs the directory.
func (w *writer) commitFile(p pending) error {
	if w.obj != nil {
		return w.commitUpload(p)
	}
	hidden, final := w.path(p.Bucket, p.Hidden), w.path(p.Bucket, p.Final)
	fi, err := w.fs.Stat(final)
	switch {
	case err == nil:
		if ok, herr := exists(w, hidden); herr != nil {
			return herr
		} else if ok {
			return fmt.Errorf("commit %s: %s exists and is not this part (%s is still there): refusing to overwrite it; is another sink writing to %s with partPrefix %q? %w",
				hidden, final, hidden, w.cfg.Dir, w.cfg.Naming.Prefix, errCollision)
		}
		if fi.Size() != p.Size {
			return fmt.Errorf("commit %s: already committed as %s but it has %d bytes, not %d: the finished file was modified or damaged",
				p.Hidden, final, fi.Size(), p.Size)
		}
		return nil // committed before
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("commit %s: %w", hidden, err)
	}
	if err := w.fs.Rename(hidden, final); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("commit pending part file of checkpoint %d: neither %s nor %s exists: its data is lost (was the output directory changed or cleaned while the job was not running?): %w",
				p.Checkpoint, hidden, final, errMissing)
		}
		return fmt.Errorf("commit %s: %w", hidden, err)
	}
	return nil
}

func exists(w *writer, name string) (bool, error) {
	_, err := w.fs.Stat(name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// resume reopens a restored in-progress part: truncated to the length the
// checkpoint made durable, ready for appending. If the part was committed
// after the snapshot (hidden gone, finished present), the finished file is
// taken back under its hidden name first: its tail beyond Length is
// output the restored job produces again.
func (w *writer) resume(r resumable, now time.Time) (*partFile, error) {
	if w.obj != nil {
		return w.resumeUpload(r, now)
	}
	hidden, final := w.path(r.Bucket, r.Hidden), w.path(r.Bucket, r.Final)
	f, err := w.fs.OpenReadWrite(hidden)
	if errors.Is(err, fs.ErrNotExist) {
		if err := w.revert(r, hidden, final); err != nil {
			return nil, err
		}
		f, err = w.fs.OpenReadWrite(hidden)
	}
	if err != nil {
		return nil, fmt.Errorf("resume in-progress part file: %w", err)
	}
	fail := func(err error) (*partFile, error) {
		_ = f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("resume %s: %w", hidden, err))
	}
	if fi.Size() < r.Length {
		return fail(fmt.Errorf("resume %s: it has %d bytes but the checkpoint made %d durable: data was lost after the checkpoint (%w)",
			hidden, fi.Size(), r.Length, errMissing))
	}
	if err := f.Truncate(r.Length); err != nil {
		return fail(fmt.Errorf("resume %s: %w", hidden, err))
	}
	if _, err := f.Seek(r.Length, io.SeekStart); err != nil {
		return fail(fmt.Errorf("resume %s: %w", hidden, err))
	}
	return &partFile{bucket: r.Bucket, index: r.Index, part: r.Part, hidden: r.Hidden, final: r.Final,
		f: f, w: w.buffer(f), size: r.Length, synced: -1, created: now, lastWrite: now}, nil
}

func (w *writer) revert(r resumable, hidden, final string) error {
	fi, err := w.fs.Stat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("resume in-progress part file: neither %s nor %s exists: its data is lost (was the output directory changed or cleaned while the job was not running?): %w",
			hidden, final, errMissing)
	case err != nil:
		return fmt.Errorf("resume %s: %w", hidden, err)
	case fi.Size() < r.Length:
		return fmt.Errorf("resume %s: it was committed as %s with %d bytes but the checkpoint recorded %d in progress: %w",
			hidden, final, fi.Size(), r.Length, errMissing)
	}
	w.log.Warn().Str("file", final).Str("as", r.Hidden).Int64("keep_bytes", r.Length).Int64("bytes", fi.Size()).
		Msg("taking back part file committed after the restored snapshot")
	if err := w.fs.Rename(final, hidden); err != nil {
		return fmt.Errorf("take back %s: %w", final, err)
	}
	w.dirty[r.Bucket] = true
	return nil
}
