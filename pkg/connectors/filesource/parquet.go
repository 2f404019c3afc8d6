package filesource

import (
	"errors"
	"fmt"
	"io"

	"github.com/flinkgo/flinkgo/pkg/connectors/internal/parquetjson"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// parquetFormat reads each file as Apache Parquet (package parquetjson):
// every row becomes a JSON object with a member per column, the inverse
// of the file sink's format parquet. A Parquet file has no byte offset
// between records: a position is the rows read (Offset stays 0), and a
// restore seeks to that row.
type parquetFormat struct{}

func (parquetFormat) Open(f vfs.File, path string, size int64, at Position, mem *Memory) (Reader, error) {
	pr, err := parquetjson.Open(f, size, at.Records)
	if err != nil {
		_ = f.Close()
		// The file's content is wrong (not Parquet, truncated, nested
		// columns, fewer rows than read before): a restart reads it the
		// same.
		return nil, runtime.SuppressRestarts(fmt.Errorf("%s: %w", path, err))
	}
	return &parquetReader{f: f, r: pr, path: path, mem: mem}, nil
}

type parquetReader struct {
	f    vfs.File
	r    *parquetjson.Reader
	path string
	mem  *Memory
	est  int // the size of the last row, to carve the next one from the arena
}

func (r *parquetReader) Read(b *runtime.Batch) error {
	for len(b.Records) < cap(b.Records) {
		dst := r.mem.Arena.Alloc(2*r.est + 64)
		out, err := r.r.Next(dst)
		if errors.Is(err, io.EOF) {
			r.mem.Arena.Keep(dst, dst)
			return io.EOF
		}
		if err != nil {
			r.mem.Arena.Keep(dst, dst)
			return fmt.Errorf("%s: %w", r.path, err)
		}
		r.est = len(out)
		b.Records = append(b.Records, runtime.Record{Value: r.mem.Arena.Keep(dst, out)})
	}
	return nil
}

func (r *parquetReader) Position() Position { return Position{Records: r.r.Rows()} }

func (r *parquetReader) Close() error {
	err := r.r.Close()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	return err
}
