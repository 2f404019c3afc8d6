package file

import (
	"bufio"
	"cmp"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// fireFunc is the fault-injection hook (runtime.Env.Fire, with the
// operator's uid and subtask already bound).
type fireFunc func(point string, attrs ...any) error

// config is what a Writer needs to know.
type config struct {
	Dir         string // the sink's path
	Subtask     int
	Parallelism int
	Naming      naming
	Policy      policy
	Format      format
	CSV         csvOptions  // format csv
	Bulk        *bulkFormat // the columns when Format is formatParquet
	MaxOpen     int         // open in-progress files at most (default 64)
	BufferSize  int         // write buffer per open file (default 64 KiB)
}

// Defaults for Config.
const (
	defaultMaxOpen    = 64
	defaultBufferSize = 64 << 10
	tickEvery         = 100 * time.Millisecond
)

// writer is one subtask's bucket and part-file state machine (Flink's
// Buckets/Bucket): per bucket at most one in-progress part file; rolled
// parts wait as pending until the checkpoint that pre-committed them
// completes. It does its file I/O through a vfs.FS and takes the time as
// an argument, so tests drive it directly, without goroutines.
//
// Lifecycle: newWriter, then Start (fresh) or Restore, then any sequence
// of Write/Tick, PreCommit(n) (at barrier n), Commit(n) (checkpoint n
// complete), FinishAll (end of input), and Close. Not safe for concurrent
// use; an error from any method leaves the writer unusable except for
// Close (the job fails over and a new writer restores).
type writer struct {
	fs   vfs.FS
	obj  *vfs.ObjectFS // the object store when the path is an s3:// URL (objects.go)
	cfg  config
	log  zerolog.Logger
	fire fireFunc
	enc  encoder
	rows *rowEncoder       // format parquet: a record's JSON object to a row
	pqs  []*parquet.Writer // free parquet writers
	// batched are the parts holding rows not yet handed to their parquet
	// writer (FlushRows).
	batched []*partFile

	open    map[string]*partFile // by bucket
	last    *partFile            // the part the previous record went to
	rolled  []pending            // closed since the last pre-commit
	pending []pending            // pre-committed, not yet committed
	next    int64                // next part number of index cfg.Subtask
	carried map[int]int64        // subtask 0: next part numbers of indices >= parallelism
	dirty   map[string]bool      // buckets with directory entries not yet synced
	dirs    map[string]bool      // buckets whose directory is known to exist durably
	bufs    []*bufio.Writer      // free write buffers
	tick    time.Time
	suffix  func() string // random part of hidden names

	committed int64 // files committed by this writer
}

// newWriter returns a writer; call Start or Restore before writing.
func newWriter(fsys vfs.FS, cfg config, log zerolog.Logger, fire fireFunc) *writer {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 1
	}
	if cfg.MaxOpen <= 0 {
		cfg.MaxOpen = defaultMaxOpen
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = defaultBufferSize
	}
	if cfg.Format == 0 {
		cfg.Format = formatLine
	}
	if cfg.Naming.Prefix == "" {
		cfg.Naming.Prefix = "part"
	}
	if cfg.Policy == (policy{}) {
		cfg.Policy = defaultPolicy
	}
	if fire == nil {
		fire = func(string, ...any) error { return nil }
	}
	var rows *rowEncoder
	if cfg.Format == formatParquet {
		// A Parquet file is complete only with its footer: a part cannot
		// be resumed, so none may be in progress at a checkpoint.
		cfg.Policy.OnCheckpoint = true
		rows = newRowEncoder(cfg.Bulk)
	}
	obj, _ := vfs.Objects(fsys, cfg.Dir)
	return &writer{fs: fsys, obj: obj, cfg: cfg, log: log, fire: fire, enc: newEncoder(cfg.CSV, cfg.Format), rows: rows,
		suffix: randomSuffix, open: map[string]*partFile{}, carried: map[int]int64{}, dirty: map[string]bool{}, dirs: map[string]bool{}}
}

func (w *writer) dirPath(bucket string) string {
	return vfs.Join(w.cfg.Dir, filepath.FromSlash(bucket))
}

func (w *writer) path(bucket, name string) string { return vfs.Join(w.dirPath(bucket), name) }

// Write appends r to the in-progress part of bucket (opening one when the
// bucket has none) and rolls the part when it reached the size limit.
// With format parquet a record that does not fit the columns is a
// *recordError error, after which the writer is still usable: nothing of
// the record was written.
func (w *writer) Write(bucket string, r *runtime.Record, now time.Time) error {
	if w.rows != nil {
		return w.writeRow(bucket, r, now)
	}
	p := w.last
	if p == nil || p.bucket != bucket {
		var err error
		if p, err = w.partFor(bucket, now); err != nil {
			return err
		}
	}
	n, err := w.enc.write(p.w, r)
	p.size += int64(n)
	if err != nil {
		if bad, ok := err.(*recordError); ok {
			return bad // nothing written: the writer goes on with the next record
		}
		return fmt.Errorf("write %s: %w", w.path(p.bucket, p.hidden), err)
	}
	p.lastWrite = now
	if w.cfg.Policy.rollOnWrite(p.size) {
		return w.roll(p)
	}
	return nil
}

// writeRow is Write for format parquet: the record is encoded first, so
// a record that does not fit opens no part.
func (w *writer) writeRow(bucket string, r *runtime.Record, now time.Time) error {
	row, err := w.rows.encode(r.Value)
	if err != nil {
		return err
	}
	p := w.last
	if p == nil || p.bucket != bucket {
		if p, err = w.partFor(bucket, now); err != nil {
			return err
		}
	}
	if p.bulk.n == 0 {
		w.batched = append(w.batched, p)
	}
	if p.size, err = p.bulk.add(row); err != nil {
		return fmt.Errorf("write %s: %w", w.path(p.bucket, p.hidden), err)
	}
	p.lastWrite = now
	if w.cfg.Policy.rollOnWrite(p.size) {
		return w.roll(p)
	}
	return nil
}

// FlushRows hands the rows that parts collected (format parquet) to their
// parquet writers: they refer to the bytes of the records they came from,
// so it must run before those records change (the end of a Process call).
func (w *writer) FlushRows() error {
	for _, p := range w.batched {
		if p.bulk == nil {
			continue // rolled meanwhile: its rows were written then
		}
		var err error
		if p.size, err = p.bulk.flushRows(); err != nil {
			return fmt.Errorf("write %s: %w", w.path(p.bucket, p.hidden), err)
		}
		if w.cfg.Policy.rollOnWrite(p.size) {
			if err := w.roll(p); err != nil {
				return err
			}
		}
	}
	clear(w.batched)
	w.batched = w.batched[:0]
	return nil
}

// partFor returns the in-progress part of bucket, creating it.
func (w *writer) partFor(bucket string, now time.Time) (*partFile, error) {
	if p := w.open[bucket]; p != nil {
		w.last = p
		return p, nil
	}
	if len(w.open) >= w.cfg.MaxOpen {
		if err := w.roll(w.leastRecentlyWritten()); err != nil {
			return nil, err
		}
	}
	if err := w.ensureDir(bucket); err != nil {
		return nil, err
	}
	part := w.next
	w.next++
	p := &partFile{bucket: bucket, index: w.cfg.Subtask, part: part, final: w.cfg.Naming.Final(w.cfg.Subtask, part),
		hidden: w.cfg.Naming.Hidden(w.cfg.Subtask, part, w.suffix()), created: now, lastWrite: now}
	f, err := w.create(p)
	if err != nil {
		return nil, fmt.Errorf("create part file: %w", err)
	}
	p.f, p.w = f, w.buffer(f)
	if h := w.enc.header; h != nil {
		n, _ := p.w.Write(h) // a write error sticks in the buffer: the next write or flush reports it
		p.size += int64(n)
	}
	if w.rows != nil {
		p.bulk = w.cfg.Bulk.newBulkPart(p.w, &w.pqs)
	}
	w.dirty[bucket] = true
	w.open[bucket] = p
	w.last = p
	return p, nil
}

func (w *writer) leastRecentlyWritten() *partFile {
	var lru *partFile
	for _, p := range w.open {
		if lru == nil || p.lastWrite.Before(lru.lastWrite) ||
			p.lastWrite.Equal(lru.lastWrite) && p.part < lru.part {
			lru = p
		}
	}
	return lru
}

func (w *writer) ensureDir(bucket string) error {
	if w.dirs[bucket] {
		return nil
	}
	if err := vfs.MkdirAllDurable(w.fs, w.dirPath(bucket), 0o755); err != nil {
		return fmt.Errorf("create bucket directory: %w", err)
	}
	if len(w.dirs) >= 4096 {
		clear(w.dirs) // time buckets come and go; forget old ones
	}
	w.dirs[bucket] = true
	return nil
}

func (w *writer) buffer(f vfs.File) *bufio.Writer {
	if n := len(w.bufs); n > 0 {
		b := w.bufs[n-1]
		w.bufs = w.bufs[:n-1]
		b.Reset(f)
		return b
	}
	return bufio.NewWriterSize(f, w.cfg.BufferSize)
}

func (w *writer) release(b *bufio.Writer) {
	b.Reset(nil)
	if len(w.bufs) < w.cfg.MaxOpen {
		w.bufs = append(w.bufs, b)
	}
}

// roll closes p: flush, fsync, close. It becomes pending at the next
// pre-commit. An empty part is removed instead.
func (w *writer) roll(p *partFile) error {
	if w.open[p.bucket] == p {
		delete(w.open, p.bucket)
	}
	if w.last == p {
		w.last = nil
	}
	var err error
	if p.bulk != nil {
		// The last row group and the footer: the file is complete.
		err = p.bulk.finish()
		p.size = p.bulk.out.n
		if err == nil && len(w.pqs) < w.cfg.MaxOpen {
			w.pqs = append(w.pqs, p.bulk.pw)
		}
		p.bulk = nil
	}
	if err == nil {
		err = p.persist()
	}
	if err == nil {
		err = seal(p)
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	w.release(p.w)
	if err != nil {
		return fmt.Errorf("close part file %s: %w", w.path(p.bucket, p.hidden), err)
	}
	if p.size == 0 {
		if err := w.removeEmpty(p); err != nil {
			return fmt.Errorf("remove empty part file: %w", err)
		}
		return nil
	}
	w.rolled = append(w.rolled, p.pending(0))
	return nil
}

// Tick applies the time-based rolling policy (rollover and inactivity
// intervals); it does the work at most every 100ms.
func (w *writer) Tick(now time.Time) error {
	if now.Sub(w.tick) < tickEvery {
		return nil
	}
	w.tick = now
	for _, p := range w.sortedOpen() {
		if w.cfg.Policy.rollOnTime(p, now) {
			if err := w.roll(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *writer) sortedOpen() []*partFile {
	out := slices.Collect(maps.Values(w.open))
	slices.SortFunc(out, func(a, b *partFile) int {
		return cmp.Or(cmp.Compare(a.index, b.index), cmp.Compare(a.part, b.part))
	})
	return out
}

// PreCommit is the first phase at barrier id: roll the parts the policy
// says to roll at a checkpoint, flush and fsync the others, make new
// directory entries durable, and attach the parts rolled since the last
// barrier to checkpoint id. It returns what to store in the snapshot.
func (w *writer) PreCommit(id int64, now time.Time) (snapshot, error) {
	if err := w.fire("file.precommit", id); err != nil {
		return snapshot{}, err
	}
	for _, p := range w.sortedOpen() {
		var err error
		if w.cfg.Policy.rollOnCheckpoint(p, now) {
			err = w.roll(p)
		} else if err = p.persist(); err != nil {
			err = fmt.Errorf("persist part file %s: %w", w.path(p.bucket, p.hidden), err)
		}
		if err != nil {
			return snapshot{}, err
		}
	}
	if err := w.syncDirty(); err != nil {
		return snapshot{}, err
	}
	for _, p := range w.rolled {
		p.Checkpoint = id
		w.pending = append(w.pending, p)
	}
	w.rolled = w.rolled[:0]
	return w.snapshot(), nil
}

func (w *writer) syncDirty() error {
	for _, b := range slices.Sorted(maps.Keys(w.dirty)) {
		if err := w.fs.SyncDir(w.dirPath(b)); err != nil {
			return fmt.Errorf("sync bucket directory: %w", err)
		}
		delete(w.dirty, b)
	}
	return nil
}

func (w *writer) snapshot() snapshot {
	s := snapshot{Pending: slices.Clone(w.pending), Counters: w.counters()}
	for _, p := range w.sortedOpen() {
		s.InProgress = append(s.InProgress, p.resumable())
	}
	for _, p := range s.Pending {
		s.Counters.Referenced = append(s.Counters.Referenced, path.Join(p.Bucket, p.Hidden))
		s.Counters.Referenced = w.appendUploadRef(s.Counters.Referenced, p.Bucket, p.Final)
	}
	for _, r := range s.InProgress {
		s.Counters.Referenced = append(s.Counters.Referenced, path.Join(r.Bucket, r.Hidden))
		s.Counters.Referenced = w.appendUploadRef(s.Counters.Referenced, r.Bucket, r.Final)
	}
	return s
}

func (w *writer) counters() counters {
	c := counters{Subtask: w.cfg.Subtask, Next: maps.Clone(w.carried)}
	c.Next[w.cfg.Subtask] = w.next
	return c
}

// Commit is the second phase: checkpoint id completed, so every pending
// part pre-committed at a checkpoint <= id is renamed to its finished
// name, then the directories are synced. Parts of later checkpoints wait.
func (w *writer) Commit(id int64) error {
	var keep []pending
	dirs := map[string]bool{}
	for i, p := range w.pending {
		if p.Checkpoint > id {
			keep = append(keep, p)
			continue
		}
		err := w.fire("file.commit", id, w.path(p.Bucket, p.Final))
		if err == nil {
			err = w.commitFile(p)
		}
		if err != nil {
			w.pending = append(keep, w.pending[i:]...)
			return err
		}
		dirs[p.Bucket] = true
		w.committed++
	}
	w.pending = keep
	if err := w.syncDirs(dirs); err != nil {
		return err
	}
	return w.fire("file.commit-done", id)
}

func (w *writer) syncDirs(dirs map[string]bool) error {
	for _, b := range slices.Sorted(maps.Keys(dirs)) {
		if err := w.fs.SyncDir(w.dirPath(b)); err != nil {
			return fmt.Errorf("sync bucket directory: %w", err)
		}
	}
	return nil
}

// FinishAll rolls every open part (end of input): the final checkpoint
// then pre-commits and commits them.
func (w *writer) FinishAll() error {
	for _, p := range w.sortedOpen() {
		if err := w.roll(p); err != nil {
			return err
		}
	}
	return nil
}

// Close releases open files without committing anything: their content
// after the last checkpoint is cut off by the next restore.
func (w *writer) Close() error {
	var first error
	for _, p := range w.sortedOpen() {
		if err := p.f.Close(); err != nil && first == nil {
			first = err
		}
		delete(w.open, p.bucket)
	}
	w.last = nil
	return first
}

// stats are figures for gauges and DescribeState.
type stats struct {
	Open, Pending, Committed int64
	NextPart                 int64
}

// Stats returns the writer's current figures.
func (w *writer) Stats() stats {
	return stats{Open: int64(len(w.open)), Pending: int64(len(w.pending) + len(w.rolled)),
		Committed: w.committed, NextPart: w.next}
}
