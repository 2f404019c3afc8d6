package filesource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// source is one subtask of the file source. Every method runs on the
// subtask's goroutine.
type source struct {
	set *settings
	ctx *runtime.Context
	fs  vfs.FS
	mem Memory

	done    map[string]bool     // files read to the end (by relative path)
	resume  map[string]Position // restored positions of files not finished
	queue   []listed            // files to read, in order
	queued  map[string]bool     // files in queue or being read
	seen    map[string]listed   // monitor: the previous listing, for the stability rule
	cur     Reader
	curFile listed
	listed  bool      // bounded: the path was listed
	next    time.Time // monitor: the next listing
	faults  bool      // a fault hook is installed (tests)
}

var (
	_ runtime.Source         = (*source)(nil)
	_ runtime.PollRecycler   = (*source)(nil)
	_ runtime.StateDescriber = (*source)(nil)
)

// Open restores the subtask's files: of every restored item (union
// state), those of files this subtask owns at its parallelism.
func (s *source) Open(ctx *runtime.Context) error {
	s.ctx, s.fs, s.faults = ctx, ctx.FS(), ctx.FaultsArmed()
	s.done, s.resume, s.queued, s.seen = map[string]bool{}, map[string]Position{}, map[string]bool{}, map[string]listed{}
	for _, it := range ctx.OperatorState().Get(filesList) {
		st, err := decodeFileState(it)
		if err != nil {
			return err
		}
		if owner(st.Path, ctx.Parallelism()) != ctx.Subtask() {
			continue
		}
		if st.Done {
			s.done[st.Path] = true
		} else {
			s.resume[st.Path] = st.Pos
		}
	}
	if m := ctx.Metrics(); m != nil {
		m.Gauge("filesRead").Store(int64(len(s.done)))
	}
	return nil
}

// path is the full path of the file rel.
func (s *source) path(rel string) string {
	if rel == "" {
		return s.set.root
	}
	return vfs.Join(s.set.root, rel)
}

// scan lists the path and queues the subtask's files that are new (and,
// in monitor mode, complete by the package's rule). Files with a restored
// position go first, so the one being read at the checkpoint is finished
// before others start (any order would be correct).
func (s *source) scan(now time.Time) error {
	files, err := list(s.fs, s.set.root, s.ctx.Subtask(), s.ctx.Parallelism(), s.set.monitor > 0)
	if err != nil {
		return err
	}
	var add []listed
	seen := make(map[string]listed, len(files))
	for _, f := range files {
		if s.done[f.rel] || s.queued[f.rel] {
			continue
		}
		seen[f.rel] = f
		_, resumed := s.resume[f.rel]
		if s.set.monitor > 0 && !resumed {
			prev, ok := s.seen[f.rel]
			stable := ok && prev.size == f.size && prev.mod.Equal(f.mod)
			if !stable && now.Sub(f.mod) < s.set.monitor {
				continue // may still be written: look again next time
			}
		}
		add = append(add, f)
	}
	s.seen = seen
	sort.SliceStable(add, func(i, j int) bool {
		_, ri := s.resume[add[i].rel]
		_, rj := s.resume[add[j].rel]
		return ri && !rj
	})
	for _, f := range add {
		s.queued[f.rel] = true
	}
	s.queue = append(s.queue, add...)
	return nil
}

// open starts the next queued file.
func (s *source) open() error {
	f := s.queue[0]
	s.queue = s.queue[1:]
	at := s.resume[f.rel]
	p := s.path(f.rel)
	file, err := s.fs.Open(p)
	if err == nil {
		var fi fs.FileInfo
		if fi, err = file.Stat(); err == nil {
			f.size = fi.Size()
		}
	}
	if err != nil {
		if file != nil {
			_ = file.Close()
		}
		if errors.Is(err, fs.ErrNotExist) && at == (Position{}) {
			// Removed between the listing and now: nothing of it was read.
			delete(s.queued, f.rel)
			return nil
		}
		return fmt.Errorf("open %s: %w", p, err)
	}
	if at.Offset > f.size {
		_ = file.Close()
		return runtime.SuppressRestarts(fmt.Errorf("%s is %d bytes, and the checkpoint restored was at byte %d of it: "+
			"the file was truncated or replaced after it was read from (a file must not change once written)", p, f.size, at.Offset))
	}
	r, err := s.set.format.Open(file, p, f.size, at, &s.mem)
	if err != nil {
		_ = file.Close()
		return err
	}
	s.cur, s.curFile = r, f
	return nil
}

// finish closes the current file, read to the end.
func (s *source) finish() error {
	err := s.cur.Close()
	s.done[s.curFile.rel] = true
	delete(s.resume, s.curFile.rel)
	delete(s.queued, s.curFile.rel)
	s.cur = nil
	if m := s.ctx.Metrics(); m != nil {
		m.Gauge("filesRead").Store(int64(len(s.done)))
	}
	return err
}

func (s *source) Poll(b *runtime.Batch) error {
	s.mem.poll++
	if s.faults {
		if err := s.ctx.Fault("file.read", s.ctx.UID(), s.ctx.Subtask()); err != nil {
			return err
		}
	}
	for len(b.Records) < cap(b.Records) {
		if s.cur == nil {
			if len(s.queue) == 0 {
				more, err := s.refill()
				if err != nil || !more {
					return err
				}
				if len(s.queue) == 0 {
					continue
				}
			}
			if err := s.open(); err != nil {
				return err
			}
			if s.cur == nil {
				continue
			}
		}
		err := s.cur.Read(b)
		if errors.Is(err, io.EOF) {
			if err := s.finish(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// refill lists the path when it is time, and says whether Poll should go
// on: false with ErrEndOfInput once a bounded source read its files, and
// false with nil when a monitoring one has nothing to read now (it waits
// a little first when b is empty, as Poll must).
func (s *source) refill() (bool, error) {
	now := time.Now()
	if s.set.monitor == 0 {
		if s.listed {
			return false, runtime.ErrEndOfInput
		}
		s.listed = true
		return true, s.scan(now)
	}
	if !now.Before(s.next) {
		s.next = now.Add(s.set.monitor)
		if err := s.scan(now); err != nil {
			return false, err
		}
		if len(s.queue) > 0 {
			return true, nil
		}
	}
	wait := min(time.Until(s.next), 50*time.Millisecond)
	select {
	case <-time.After(wait):
	case <-s.ctx.Wakeup():
	}
	return false, nil
}

// SnapshotState records the finished files and the position in the
// current one: a restore reads neither the first again nor the records
// of the second before the position.
func (s *source) SnapshotState(int64) error {
	items := make([][]byte, 0, len(s.done)+len(s.resume)+1)
	for rel := range s.done {
		items = append(items, fileState{Path: rel, Done: true}.encode())
	}
	for rel, pos := range s.resume {
		if s.cur != nil && rel == s.curFile.rel {
			continue
		}
		// Restored, not reopened yet.
		items = append(items, fileState{Path: rel, Pos: pos}.encode())
	}
	if s.cur != nil {
		items = append(items, fileState{Path: s.curFile.rel, Pos: s.cur.Position()}.encode())
	}
	s.ctx.OperatorState().Set(filesList, state.Union, items)
	return nil
}

// RecycleValues lets the readers reuse the memory of the Values emitted.
func (s *source) RecycleValues() { s.mem.recycle() }

// RecycleValuesUpTo lets the readers reuse the blocks read into by the
// first polls Polls.
func (s *source) RecycleValuesUpTo(polls int64) { s.mem.recycleUpTo(polls) }

// DescribeState summarises the position for savepoint inspect.
func (s *source) DescribeState() map[string]any {
	d := map[string]any{"filesRead": len(s.done), "filesQueued": len(s.queue)}
	if s.cur != nil {
		pos := s.cur.Position()
		d["reading"] = s.path(s.curFile.rel)
		d["offset"], d["records"] = pos.Offset, pos.Records
	}
	if n := s.set.skipped.Load(); n > 0 {
		d["skippedRecords"] = n
	}
	return d
}

func (s *source) Close() error {
	if s.cur == nil {
		return nil
	}
	err := s.cur.Close()
	s.cur = nil
	return err
}
