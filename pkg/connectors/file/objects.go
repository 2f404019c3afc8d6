package file

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// A sink whose path is an s3:// URL keeps the Writer's state machine and
// changes only what a rename did on a disk (docs/object-storage.md):
//
//   - an in-progress part is a multipart upload of its finished name
//     (upload.go); its recoverable state is the upload id, the uploaded
//     parts and the tail, kept in the snapshot;
//   - committing completes the upload: the object appears whole under its
//     finished name, never before its checkpoint completed; completing
//     again is recognised (upload gone, object there with the size);
//   - a restore continues recorded uploads, takes back a part that was
//     committed after the snapshot (its recorded parts copied into a new
//     upload, the object deleted), aborts orphan uploads and deletes
//     finished objects numbered at or past the restored counter.
//
// Hidden names are kept in the state as the parts' identities (the union
// list refers to them) but no object has one.

// create opens the in-progress file of a new part.
func (w *writer) create(p *partFile) (vfs.File, error) {
	if w.obj == nil {
		return w.fs.Create(w.path(p.bucket, p.hidden))
	}
	return w.newUpload(w.path(p.bucket, p.final), "", nil, nil), nil
}

func (w *writer) newUpload(name, id string, parts []vfs.Part, tail []byte) *upload {
	o := w.obj.Options()
	return restoredUpload(w.obj, name, int(o.PartSize), o.Concurrency, id, parts, tail)
}

// seal makes a rolled part complete in its store (object storage: its
// tail uploaded as the last part).
func seal(p *partFile) error {
	if u, ok := p.f.(*upload); ok {
		return u.seal()
	}
	return nil
}

// removeEmpty drops a part rolled without a byte.
func (w *writer) removeEmpty(p *partFile) error {
	if u, ok := p.f.(*upload); ok {
		if u.id == "" {
			return nil
		}
		return w.obj.AbortUpload(u.name, u.id)
	}
	return w.fs.Remove(w.path(p.bucket, p.hidden))
}

// uploadRef is the union list's entry for a part in object storage: the
// owner of its index leaves the uploads of that key alone.
func uploadRef(bucket, final string) string { return "upload:" + path.Join(bucket, final) }

func (w *writer) appendUploadRef(refs []string, bucket, final string) []string {
	if w.obj == nil {
		return refs
	}
	return append(refs, uploadRef(bucket, final))
}

// commitUpload completes a pending part's upload, idempotently: the
// finished object already there while the upload is gone, with the
// recorded size, was committed before. It never replaces an object that
// another writer put under the name.
func (w *writer) commitUpload(p pending) error {
	final := w.path(p.Bucket, p.Final)
	if p.Upload == "" {
		return fmt.Errorf("commit %s: the snapshot records no upload for a pending part of %d bytes: the state is damaged", final, p.Size)
	}
	if info, err := w.obj.HeadObject(final); err == nil {
		if _, lerr := w.obj.ListParts(final, p.Upload); lerr == nil {
			return fmt.Errorf("commit %s: the object exists and is not this part (its upload %s is still there): refusing to overwrite it; is another sink writing to %s with partPrefix %q? %w",
				final, p.Upload, w.cfg.Dir, w.cfg.Naming.Prefix, errCollision)
		} else if !errors.Is(lerr, vfs.ErrNoUpload) {
			return fmt.Errorf("commit %s: %w", final, lerr)
		}
		return w.checkCommitted(final, info, p)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("commit %s: %w", final, err)
	}
	err := w.obj.CompleteUpload(final, p.Upload, p.Parts)
	if !errors.Is(err, vfs.ErrNoUpload) {
		if err != nil {
			return fmt.Errorf("commit %s: %w", final, err)
		}
		return nil
	}
	// Gone: completed by an attempt whose answer was lost, or lost.
	info, herr := w.obj.HeadObject(final)
	if errors.Is(herr, fs.ErrNotExist) {
		return fmt.Errorf("commit pending part of checkpoint %d: neither its upload %s nor the object %s exists: its data is lost (were the bucket's uploads aborted or the object deleted while the job was not running?): %w",
			p.Checkpoint, p.Upload, final, errMissing)
	}
	if herr != nil {
		return fmt.Errorf("commit %s: %w", final, herr)
	}
	return w.checkCommitted(final, info, p)
}

func (w *writer) checkCommitted(final string, info vfs.ObjectInfo, p pending) error {
	if info.Size != p.Size {
		return fmt.Errorf("commit %s: already committed but it has %d bytes, not %d: the object was modified or replaced", final, info.Size, p.Size)
	}
	return nil
}

// resumeUpload reopens a restored in-progress part: its recorded upload
// continued (the parts uploaded after the snapshot are overwritten or
// left out at completion), and the snapshot's tail as the buffer.
func (w *writer) resumeUpload(r resumable, now time.Time) (*partFile, error) {
	final := w.path(r.Bucket, r.Final)
	var size int64
	for _, p := range r.Parts {
		size += p.Size
	}
	if size+int64(len(r.Tail)) != r.Length {
		return nil, fmt.Errorf("resume %s: the snapshot records %d bytes but its parts and tail hold %d: the state is damaged", final, r.Length, size+int64(len(r.Tail)))
	}
	id, err := w.continueUpload(final, r)
	if err != nil {
		return nil, err
	}
	if err := w.abortOthers(final, id); err != nil {
		return nil, err
	}
	u := w.newUpload(final, id, r.Parts, r.Tail)
	return &partFile{bucket: r.Bucket, index: r.Index, part: r.Part, hidden: r.Hidden, final: r.Final,
		f: u, w: w.buffer(u), size: r.Length, synced: -1, created: now, lastWrite: now}, nil
}

// continueUpload returns the upload that holds r's recorded parts: the
// recorded one, or, when that is gone because the part was committed
// after the snapshot, a new one made of the recorded parts copied out of
// the committed object, which is then taken back (deleted: the restored
// job writes its records again). An upload a crashed restore already
// made that way is found and used again.
func (w *writer) continueUpload(final string, r resumable) (string, error) {
	if r.Upload != "" {
		listed, err := w.obj.ListParts(final, r.Upload)
		if err == nil {
			if !hasParts(listed, r.Parts) {
				return "", fmt.Errorf("resume %s: upload %s lacks parts the snapshot recorded: %w", final, r.Upload, errMissing)
			}
			return r.Upload, nil
		}
		if !errors.Is(err, vfs.ErrNoUpload) {
			return "", fmt.Errorf("resume %s: %w", final, err)
		}
	}
	id, err := w.findCopy(final, r)
	if err != nil || (id == "" && len(r.Parts) > 0) {
		if err == nil {
			id, err = w.copyBack(final, r)
		}
		if err != nil {
			return "", err
		}
	}
	return id, w.takeBack(final, r)
}

// hasParts reports whether listed holds every recorded part unchanged.
func hasParts(listed, recorded []vfs.Part) bool {
	by := map[int]vfs.Part{}
	for _, p := range listed {
		by[p.Number] = p
	}
	for _, p := range recorded {
		l, ok := by[p.Number]
		if !ok || l.Size != p.Size || strings.Trim(l.ETag, `"`) != strings.Trim(p.ETag, `"`) {
			return false
		}
	}
	return true
}

// findCopy finds an upload of final that holds r's recorded parts (made
// by an earlier restore of the same snapshot); "" when there is none.
func (w *writer) findCopy(final string, r resumable) (string, error) {
	if len(r.Parts) == 0 {
		return "", nil
	}
	ups, err := w.obj.ListUploads(vfs.Dir(final))
	if err != nil {
		return "", fmt.Errorf("resume %s: %w", final, err)
	}
	for _, u := range ups {
		if u.Key != final {
			continue
		}
		listed, err := w.obj.ListParts(final, u.ID)
		if err == nil && hasParts(listed, r.Parts) {
			return u.ID, nil
		}
	}
	return "", nil
}

// copyBack makes a new upload of final from the recorded parts of the
// committed object final (each part at least MinPartSize, so each a valid
// ranged copy).
func (w *writer) copyBack(final string, r resumable) (string, error) {
	info, err := w.obj.HeadObject(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("resume in-progress part: neither its upload %s nor the object %s exists: its data is lost (were the bucket's uploads aborted or the object deleted while the job was not running?): %w",
			r.Upload, final, errMissing)
	case err != nil:
		return "", fmt.Errorf("resume %s: %w", final, err)
	case info.Size < r.Length:
		return "", fmt.Errorf("resume %s: it was committed with %d bytes but the snapshot recorded %d in progress: %w", final, info.Size, r.Length, errMissing)
	}
	id, err := w.obj.CreateUpload(final)
	if err != nil {
		return "", fmt.Errorf("resume %s: %w", final, err)
	}
	var off int64
	for _, p := range r.Parts {
		if _, err := w.obj.CopyPart(final, id, p.Number, final, off, p.Size); err != nil {
			return "", fmt.Errorf("resume %s: copy part %d back: %w", final, p.Number, err)
		}
		off += p.Size
	}
	return id, nil
}

// takeBack deletes the object final when the part was committed after the
// snapshot (its content up to the snapshot is in the resumed upload and
// tail; the rest the restored job writes again).
func (w *writer) takeBack(final string, r resumable) error {
	info, err := w.obj.HeadObject(final)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("resume %s: %w", final, err)
	}
	if info.Size < r.Length {
		return fmt.Errorf("resume %s: it was committed with %d bytes but the snapshot recorded %d in progress: %w", final, info.Size, r.Length, errMissing)
	}
	w.log.Warn().Str("file", final).Int64("keep_bytes", r.Length).Int64("bytes", info.Size).
		Msg("taking back part file committed after the restored snapshot")
	return w.obj.Remove(final)
}

// abortOthers aborts the uploads of final but keep: left by the timeline
// after the snapshot, or by a crashed restore.
func (w *writer) abortOthers(final, keep string) error {
	ups, err := w.obj.ListUploads(vfs.Dir(final))
	if err != nil {
		return fmt.Errorf("resume %s: %w", final, err)
	}
	for _, u := range ups {
		if u.Key == final && u.ID != keep {
			if err := w.obj.AbortUpload(final, u.ID); err != nil && !errors.Is(err, vfs.ErrNoUpload) {
				return fmt.Errorf("resume %s: abort upload %s: %w", final, u.ID, err)
			}
		}
	}
	return nil
}

// scanObjects lists the finished part objects of the owned indices below
// the path (objects below a "."-named prefix are skipped).
func (w *writer) scanObjects() ([]found, error) {
	objs, err := w.obj.ListObjects(w.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", w.cfg.Dir, err)
	}
	_, root, _ := vfs.SplitObject(w.cfg.Dir)
	var out []found
	for _, o := range objs {
		rel := strings.TrimPrefix(strings.TrimPrefix(o.Key, root), "/")
		bucket, name := path.Dir(rel), path.Base(rel)
		if bucket == "." {
			bucket = ""
		}
		if hiddenComponent(bucket) {
			continue
		}
		idx, part, hidden, ok := w.cfg.Naming.Parse(name)
		if ok && !hidden && w.owns(idx) {
			out = append(out, found{bucket: bucket, name: name, index: idx, part: part})
		}
	}
	return out, nil
}

func hiddenComponent(bucket string) bool {
	for _, c := range strings.Split(bucket, "/") {
		if strings.HasPrefix(c, ".") {
			return true
		}
	}
	return false
}

// cleanupObjects is cleanup in object storage: finished objects of owned
// indices numbered at or past the restored counter are deleted, and
// uploads of owned part names that neither the restored state nor this
// writer refers to are aborted (orphans of a timeline after the snapshot).
func (w *writer) cleanupObjects(referenced map[string]bool) error {
	found, err := w.scanObjects()
	if err != nil {
		return err
	}
	for _, f := range found {
		if f.part < w.nextOf(f.index) {
			continue
		}
		w.log.Warn().Str("file", w.path(f.bucket, f.name)).Int64("part", f.part).Int64("restored_counter", w.nextOf(f.index)).
			Msg("deleting part file committed after the restored snapshot (the restored job writes its records again)")
		if err := w.obj.Remove(w.path(f.bucket, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore: remove %s: %w", w.path(f.bucket, f.name), err)
		}
	}
	return w.abortOrphans(referenced)
}

func (w *writer) abortOrphans(referenced map[string]bool) error {
	ups, err := w.obj.ListUploads(w.cfg.Dir)
	if err != nil {
		return fmt.Errorf("restore: list uploads below %s: %w", w.cfg.Dir, err)
	}
	_, root, _ := vfs.SplitObject(w.cfg.Dir)
	for _, u := range ups {
		_, key, _ := vfs.SplitObject(u.Key)
		rel := strings.TrimPrefix(strings.TrimPrefix(key, root), "/")
		bucket, name := path.Dir(rel), path.Base(rel)
		if bucket == "." {
			bucket = ""
		}
		idx, _, hidden, ok := w.cfg.Naming.Parse(name)
		if !ok || hidden || !w.owns(idx) || referenced[uploadRef(bucket, name)] || w.inUse(bucket, name) {
			continue
		}
		w.log.Info().Str("file", u.Key).Str("upload", u.ID).Msg("aborting multipart upload no restored state refers to")
		if err := w.obj.AbortUpload(u.Key, u.ID); err != nil && !errors.Is(err, vfs.ErrNoUpload) {
			return fmt.Errorf("restore: abort upload of %s: %w", u.Key, err)
		}
	}
	return nil
}

// inUse reports whether this writer holds the part bucket/final.
func (w *writer) inUse(bucket, final string) bool {
	if p := w.open[bucket]; p != nil && p.final == final {
		return true
	}
	for _, p := range append(w.pending, w.rolled...) {
		if p.Bucket == bucket && p.Final == final {
			return true
		}
	}
	return false
}
