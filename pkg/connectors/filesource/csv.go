package filesource

import (
	"errors"
	"fmt"
	"io"

	"github.com/flinkgo/flinkgo/pkg/connectors/internal/csvrow"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// csvFormat reads CSV rows as JSON objects (package csvrow): the member
// names are the columns option, else the file's header row. With header
// the first row of every file is a header (skipped when columns names the
// members). Empty lines are skipped.
type csvFormat struct {
	delim   byte
	header  bool
	columns []string
	infer   bool
	policy  decodePolicy
}

func (c *csvFormat) Open(f vfs.File, path string, size int64, at Position, mem *Memory) (Reader, error) {
	r := &csvReader{format: c, path: path, pos: at, buf: textBuffer{f: f, mem: mem, left: size},
		parser: csvrow.Parser{Delim: c.delim}}
	if c.columns != nil {
		r.setNames(c.columns)
	}
	if c.header && (at.Offset == 0 || c.columns == nil) {
		// The header is read again on a restore: its names are not
		// in the checkpoint.
		n, err := r.next()
		if err == io.EOF {
			r.pos.Offset = max(r.pos.Offset, int64(n))
			r.done = true
			return r, nil
		}
		if err != nil {
			_ = r.buf.close()
			return nil, fmt.Errorf("%s: the header row: %w", path, err)
		}
		if c.columns == nil {
			names := make([]string, r.parser.Len())
			seen := map[string]bool{}
			for i := range names {
				v, _ := r.parser.Field(i)
				names[i] = string(v)
				if names[i] == "" || seen[names[i]] {
					_ = r.buf.close()
					return nil, runtime.SuppressRestarts(fmt.Errorf("%s: the header row's column %d is %q: "+
						"every column needs a name of its own (or set header: true and columns: to name them)", path, i+1, names[i]))
				}
				seen[names[i]] = true
			}
			r.setNames(names)
		}
		r.buf.consume(n)
		r.pos.Offset = max(r.pos.Offset, int64(n))
	}
	if r.pos.Offset > 0 && r.pos.Offset != int64(r.buf.start) {
		// Resume past the rows read: drop what is buffered and seek.
		r.buf.start, r.buf.end, r.buf.eof = 0, 0, false
		if _, err := f.Seek(r.pos.Offset, io.SeekStart); err != nil {
			_ = r.buf.close()
			return nil, err
		}
		r.buf.left = size - r.pos.Offset
	}
	return r, nil
}

type csvReader struct {
	format *csvFormat
	path   string
	buf    textBuffer
	parser csvrow.Parser
	names  [][]byte // each column's name as a JSON string and a colon
	pos    Position
	done   bool
}

func (r *csvReader) setNames(names []string) {
	r.names = make([][]byte, len(names))
	for i, n := range names {
		r.names[i] = append(jsonstring.Append(nil, n), ':')
	}
}

func (r *csvReader) Position() Position { return r.pos }
func (r *csvReader) Close() error       { return r.buf.close() }

// next parses the next record of the buffer, reading more as needed; it
// returns the bytes it takes (not consumed yet) or io.EOF.
func (r *csvReader) next() (int, error) {
	for {
		data := r.buf.data()
		if len(data) == 0 && r.buf.eof {
			return 0, io.EOF
		}
		n, err := r.parser.Next(data, r.buf.eof)
		if !errors.Is(err, csvrow.ErrNeedMore) {
			return n, err
		}
		if err := r.buf.fill(); err != nil {
			return 0, fmt.Errorf("read %s: %w", r.path, err)
		}
	}
}

func (r *csvReader) Read(b *runtime.Batch) error {
	if r.done {
		return io.EOF
	}
	for len(b.Records) < cap(b.Records) {
		n, err := r.next()
		if err == io.EOF {
			return io.EOF
		}
		at := r.pos
		if err != nil {
			// The row cannot be delimited: nothing after it can be read.
			return runtime.SuppressRestarts(fmt.Errorf("%s: record %d (byte %d): %w", r.path, at.Records+1, at.Offset, err))
		}
		row := r.buf.data()[:n]
		r.buf.consume(n)
		r.pos.Offset += int64(n)
		if r.parser.Blank() {
			continue
		}
		r.pos.Records++
		if r.parser.Len() != len(r.names) {
			if r.format.policy.skip {
				r.format.policy.skipped.Add(1)
				continue
			}
			return decodeError(r.path, at, fmt.Errorf("%d fields where the header has %d columns", r.parser.Len(), len(r.names)), row)
		}
		b.Records = append(b.Records, runtime.Record{Value: r.appendJSON(n)})
	}
	return nil
}

// appendJSON builds the JSON object of the parsed row (of n bytes) in the
// arena.
func (r *csvReader) appendJSON(n int) []byte {
	a := &r.buf.mem.Arena
	// Each byte of a field escapes to at most 6 (\u00XX); names are fixed.
	est := 2 + 6*n
	for _, nm := range r.names {
		est += len(nm) + 1
	}
	dst := a.Alloc(est)
	out := append(dst, '{')
	for i, nm := range r.names {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, nm...)
		v, quoted := r.parser.Field(i)
		out = csvrow.AppendValue(out, v, quoted, r.format.infer)
	}
	out = append(out, '}')
	return a.Keep(dst, out)
}
