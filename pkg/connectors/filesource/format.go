package filesource

import (
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// Position is where a Reader is in its file: what a checkpoint records, and
// what Format.Open gets back on a restore. It always lies between two
// records. Offset is a byte offset for the text formats (json, csv,
// lines); a format without one (a row-group based format such as Parquet)
// may keep it 0 and resume by Records alone.
type Position struct {
	Offset  int64 // bytes of the file consumed up to the next record
	Records int64 // records read (emitted or skipped) up to the next record
}

// Format decodes the records of one file format. A Format is built from
// the source's options when the job is configured and shared, read-only,
// by the subtasks.
type Format interface {
	// Open returns a Reader of f, the file at path (for errors), of size
	// bytes, starting at at: the zero Position, or one a Reader of this
	// format returned. mem is the subtask's memory for the Values the
	// Reader emits. The Reader owns f and closes it.
	Open(f vfs.File, path string, size int64, at Position, mem *Memory) (Reader, error)
}

// Reader reads the records of one file, on the subtask's goroutine.
type Reader interface {
	// Read appends records to b, up to cap(b.Records), and returns nil
	// once b is full, io.EOF once the file has no more records (with
	// those it appended), or an error (it names the file and the
	// place). Records' Values must stay valid until Memory.recycle.
	Read(b *runtime.Batch) error
	// Position is where the record after the last one Read appended
	// starts.
	Position() Position
	// Close releases the file.
	Close() error
}

// Memory is one subtask's memory for the Values its Readers emit: blocks
// a text Reader reads the file into (Values are slices of them), and an
// arena for Values a Reader builds (a CSV row as JSON). The source
// recycles both when the engine says no emitted Value is read any more
// (runtime.ValueRecycler).
type Memory struct {
	Arena   runtime.Arena
	retired []retiredBlock // blocks done with, possibly still referenced
	free    [][]byte       // blocks no Value points into
	poll    int64          // the source's Poll under way (see Retire)
}

// retiredBlock is a block and the Poll it was retired in: Values of that
// Poll and earlier ones may point into it, none of later ones.
type retiredBlock struct {
	b    []byte
	poll int64
}

// Block returns a block of n bytes at least.
func (m *Memory) Block(n int) []byte {
	for i := len(m.free) - 1; i >= 0; i-- {
		if b := m.free[i]; cap(b) >= n {
			m.free = append(m.free[:i], m.free[i+1:]...)
			return b[:cap(b)]
		}
	}
	return make([]byte, n)
}

// Retire hands back a block the Reader reads no more; Values may still
// point into it until the next recycle. Only the latest few are kept for
// reuse: where the engine never recycles (Values kept downstream), the
// others are left to the garbage collector.
func (m *Memory) Retire(b []byte) {
	if b == nil {
		return
	}
	if len(m.retired) == maxFreeBlocks {
		copy(m.retired, m.retired[1:])
		m.retired = m.retired[:maxFreeBlocks-1]
	}
	m.retired = append(m.retired, retiredBlock{b: b, poll: m.poll})
}

// recycle makes every retired block and the arena's bytes reusable.
func (m *Memory) recycle() {
	m.recycleUpTo(m.poll)
	m.Arena.Rewind()
}

// recycleUpTo makes the retired blocks no Value of a Poll after poll
// points into reusable (the arena's bytes are not: it has no such order).
func (m *Memory) recycleUpTo(poll int64) {
	i := 0
	for i < len(m.retired) && m.retired[i].poll <= poll {
		m.free = append(m.free, m.retired[i].b)
		i++
	}
	n := copy(m.retired, m.retired[i:])
	clear(m.retired[n:])
	m.retired = m.retired[:n]
	if len(m.free) > maxFreeBlocks {
		clear(m.free[:len(m.free)-maxFreeBlocks])
		m.free = append(m.free[:0], m.free[len(m.free)-maxFreeBlocks:]...)
	}
}

// maxFreeBlocks bounds the blocks kept for reuse.
const maxFreeBlocks = 8
