package filesource

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// blockSize is the most a text reader reads at once.
const blockSize = 256 << 10

// textBuffer is a text file read block by block into Memory: data() is
// what is read and not consumed yet.
type textBuffer struct {
	f          vfs.File
	mem        *Memory
	buf        []byte
	start, end int
	left       int64 // bytes of the file not read yet (by its size when opened)
	eof        bool
}

func (t *textBuffer) data() []byte { return t.buf[t.start:t.end] }

// consume marks n bytes of data() consumed.
func (t *textBuffer) consume(n int) { t.start += n }

// fill reads more of the file. The bytes not consumed move to a new block
// (Values may point into the old one), twice as large if they fill it.
func (t *textBuffer) fill() error {
	tail := t.end - t.start
	if t.buf == nil || t.end == len(t.buf) || t.start > 0 {
		size := int(min(max(t.left+1, 4096), blockSize))
		if tail*2 > size {
			size = tail * 2
		}
		nb := t.mem.Block(size)
		copy(nb, t.buf[t.start:t.end])
		t.mem.Retire(t.buf)
		t.buf, t.start, t.end = nb, 0, tail
	}
	for range 100 { // a Read of 0 bytes and no error is retried, as bufio does
		n, err := t.f.Read(t.buf[t.end:])
		t.end += n
		t.left -= int64(n)
		if errors.Is(err, io.EOF) {
			t.eof = true
			return nil
		}
		if n > 0 || err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

func (t *textBuffer) close() error {
	t.mem.Retire(t.buf)
	t.buf = nil
	return t.f.Close()
}

// decodePolicy is what a reader does with a record it cannot decode.
type decodePolicy struct {
	skip    bool          // onDecodeError: skip (else fail)
	skipped *atomic.Int64 // counted here
}

// lineFormat reads text lines (format lines) or one JSON value per line
// (format json). A line ends at LF; a CR before it is dropped; the last
// line may lack its LF. Format json skips blank lines.
type lineFormat struct {
	json   bool
	policy decodePolicy
}

func (l *lineFormat) Open(f vfs.File, path string, size int64, at Position, mem *Memory) (Reader, error) {
	if at.Offset > 0 {
		if _, err := f.Seek(at.Offset, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return &lineReader{format: l, path: path, pos: at, buf: textBuffer{f: f, mem: mem, left: size - at.Offset}}, nil
}

type lineReader struct {
	format *lineFormat
	path   string
	buf    textBuffer
	pos    Position
}

func (r *lineReader) Position() Position { return r.pos }
func (r *lineReader) Close() error       { return r.buf.close() }

func (r *lineReader) Read(b *runtime.Batch) error {
	for len(b.Records) < cap(b.Records) {
		data := r.buf.data()
		i := bytes.IndexByte(data, '\n')
		n := i + 1
		if i < 0 {
			if !r.buf.eof {
				if err := r.buf.fill(); err != nil {
					return fmt.Errorf("read %s: %w", r.path, err)
				}
				continue
			}
			if len(data) == 0 {
				return io.EOF
			}
			i, n = len(data), len(data)
		}
		line := data[:i:i]
		if i > 0 && line[i-1] == '\r' {
			line = line[: i-1 : i-1]
		}
		r.buf.consume(n)
		at := r.pos
		r.pos.Offset += int64(n)
		if r.format.json {
			if err := expr.CheckJSON(line); err != nil {
				if len(bytes.TrimSpace(line)) == 0 {
					continue // a blank line
				}
				r.pos.Records++
				if r.format.policy.skip {
					r.format.policy.skipped.Add(1)
					continue
				}
				return decodeError(r.path, at, err, line)
			}
		}
		r.pos.Records++
		b.Records = append(b.Records, runtime.Record{Value: line})
	}
	return nil
}

// decodeError is the error for a record that cannot be decoded, at its
// place in the file.
func decodeError(path string, at Position, err error, data []byte) error {
	const max = 64
	ex := fmt.Sprintf("%q", data)
	if len(data) > max {
		ex = fmt.Sprintf("%q…", data[:max])
	}
	return runtime.SuppressRestarts(fmt.Errorf("%s: record %d (byte %d): %w: %s (set onDecodeError: skip to skip such records)",
		path, at.Records+1, at.Offset, err, ex))
}
